//! Reading this machine's topology from sysfs.
