//! The model's first idle predictor, kept as a labelled option (`--governor ewma`): not a
//! kernel governor. The prediction is an EWMA (weight 1/8 [EST]) of the CPU's recent idle
//! periods, measured from the idle loop's entry; the deepest state whose target residency fits
//! it is chosen and the tick always stops. It has no notion of the next timer, so long idles
//! pick the deepest state; at 2 µs idle gaps it flips between POLL and a 2 µs-residency C1
//! (the bistability issue #17 reports). When POLL's time limit runs out it re-selects at once
//! among the deeper states, without going round the idle loop.

use wakesim_costs::IdleState;
use wakesim_engine::Time;

#[derive(Clone, Debug, Default)]
pub struct Ewma {
    /// The predicted idle length, ns.
    pub predict: Time,
}

impl Ewma {
    /// The deepest state from `at_least` on whose target residency fits the prediction.
    pub fn select(&self, states: &[IdleState], at_least: usize) -> usize {
        let mut k = at_least.min(states.len() - 1);
        for (i, s) in states.iter().enumerate().skip(at_least) {
            if s.target_residency <= self.predict {
                k = i;
            }
        }
        k
    }

    /// A wakeup after `observed` ns in the idle loop: predict ← (7 × predict + observed) / 8.
    pub fn update(&mut self, observed: Time) {
        self.predict = (7 * self.predict + observed) / 8;
    }
}
