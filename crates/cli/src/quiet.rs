//! Measurements a neighbour disturbed are repeated. The model assumes an otherwise idle
//! machine with CPUs of its own; on a shared VM another tenant's burst (the hypervisor's steal)
//! or another process moves a wake or a switch by tens of percent for seconds at a time. A
//! repetition is judged by `/proc/stat` over its own interval (`OtherLoad`); calibrate and
//! validate repeat the loud ones and keep the quietest.

use wakesim_hostbench::{sys, Summary};

/// Share of the machine, percent, that the hypervisor (steal) or other processes may take during
/// a repetition of a sleeping measurement before calibrate repeats it: the model assumes CPUs
/// of its own, and on a shared VM a neighbour's burst moves a wake or a switch by tens of percent.
pub const QUIET_PCT: f64 = 10.0;

/// What [`quiet_rounds`] kept.
#[derive(Debug, PartialEq)]
pub struct Rounds {
    /// Each kept round's figures.
    pub rounds: Vec<Vec<f64>>,
    /// Rounds that ran but were not kept.
    pub repeated: usize,
    /// The largest disturbance among the kept rounds, percent of the machine.
    pub worst_kept_pct: f64,
}

/// Runs `round` — one repetition of one or more measurements, alternating — until `reps` rounds
/// ran quiet (steal and other load each at most [`QUIET_PCT`] by `/proc/stat`) or `3 × reps`
/// rounds ran, and keeps the `reps` least disturbed. The first error ends it.
pub fn quiet_rounds(reps: usize, cpus: u32, mut round: impl FnMut() -> Result<Vec<f64>, String>) -> Result<Rounds, String> {
    let mut got: Vec<(f64, Vec<f64>)> = Vec::new();
    let mut quiet = 0;
    while quiet < reps && got.len() < 3 * reps {
        let mut load = sys::OtherLoad::start();
        let v = round()?;
        let noise = load.stop(cpus).map_or(0.0, |x| x.other_pct.max(x.steal_pct));
        quiet += usize::from(noise <= QUIET_PCT);
        got.push((noise, v));
    }
    Ok(keep_quietest(got, reps))
}

/// The `reps` rounds with the least disturbance (time order among equals).
fn keep_quietest(mut got: Vec<(f64, Vec<f64>)>, reps: usize) -> Rounds {
    let ran = got.len();
    got.sort_by(|a, b| a.0.total_cmp(&b.0));
    got.truncate(reps);
    let worst_kept_pct = got.iter().map(|x| x.0).fold(0.0, f64::max);
    Rounds { rounds: got.into_iter().map(|x| x.1).collect(), repeated: ran - reps.min(ran), worst_kept_pct }
}

/// Column `i` of the rounds, as a summary.
pub fn column(rounds: &[Vec<f64>], i: usize) -> Result<Summary, String> {
    Summary::of(&rounds.iter().filter_map(|r| r.get(i).copied()).collect::<Vec<_>>()).ok_or_else(|| "no figure".into())
}

/// " (N disturbed repetitions repeated)" when any were.
pub fn dropped_note(n: usize) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(" ({n} repetition{} with > {QUIET_PCT:.0} % steal or other load repeated)", if n == 1 { "" } else { "s" })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disturbed_rounds_are_dropped_and_the_quiet_ones_kept_in_time_order() {
        let got = vec![(50.0, vec![9.0]), (0.0, vec![1.0]), (20.0, vec![8.0]), (0.0, vec![2.0]), (3.0, vec![3.0])];
        assert_eq!(keep_quietest(got, 3), Rounds { rounds: vec![vec![1.0], vec![2.0], vec![3.0]], repeated: 2, worst_kept_pct: 3.0 });
        // Too few quiet rounds: the least disturbed loud ones complete the set.
        let loud = keep_quietest(vec![(50.0, vec![9.0]), (20.0, vec![8.0])], 3);
        assert_eq!(loud, Rounds { rounds: vec![vec![8.0], vec![9.0]], repeated: 0, worst_kept_pct: 50.0 });
    }

}
