//! Whole-run statistics and their text/JSON forms.
