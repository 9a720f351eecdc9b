//! The runqueue tree's order on equal keys: `__enqueue_entity()` inserts with `rb_add_cached()`
//! and a strict `__entity_less()`, so an entity goes after every entity already there with the
//! same deadline (EEVDF) or vruntime (CFS), and `__pick_eevdf()` / `pick_next_entity()` take
//! the leftmost. Of two equal keys the one inserted first runs first, whatever the task ids; the
//! running entity, which is not in the tree, wins only with a strictly smaller key
//! (`entity_before()`). Found replaying a traced 6.18 kernel: wakees placed at the same V run in
//! wake order.

use wakesim_model::eevdf::CfsRq;
use wakesim_model::state::{Entity, TaskId};
use wakesim_model::Features;

const SLICE: i64 = 3_000_000;

fn tasks(n: usize) -> Vec<Entity> {
    vec![Entity::standalone(); n]
}

fn eevdf() -> Features {
    Features::for_kernel("v6.6").unwrap()
}

fn cfs() -> Features {
    let mut f = Features::for_kernel("v6.5").unwrap();
    assert!(!f.EEVDF);
    f.EEVDF = false;
    f
}

/// Enqueues `order` one after the other with no time passing: each is placed at the same V
/// with no lag, so their deadlines (EEVDF) or vruntimes (CFS) are equal.
fn enqueue_all(f: &Features, order: &[TaskId]) -> (CfsRq, Vec<Entity>) {
    let mut rq = CfsRq::new();
    let mut ts = tasks(order.len());
    for &t in order {
        rq.enqueue(&mut ts, t, f, false, SLICE);
    }
    (rq, ts)
}

#[test]
fn equal_deadlines_go_to_the_entity_inserted_first_not_the_lower_id() {
    let (rq, ts) = enqueue_all(&eevdf(), &[2, 0, 1]);
    let d: Vec<i64> = (0..3).map(|i| ts[i].deadline).collect();
    assert!(
        d[0] == d[1] && d[1] == d[2],
        "placed with equal deadlines: {d:?}"
    );
    assert_eq!(rq.pick(&ts, &eevdf()), 2);
}

#[test]
fn equal_vruntimes_go_to_the_entity_inserted_first_under_cfs() {
    let (rq, ts) = enqueue_all(&cfs(), &[1, 0]);
    assert_eq!(
        ts[0].vruntime, ts[1].vruntime,
        "placed at the same vruntime"
    );
    assert_eq!(rq.pick(&ts, &cfs()), 1);
}

#[test]
fn an_entity_put_back_goes_behind_its_equals() {
    // 0 runs for no time and is put back: it re-enters the tree after 1, which now ties with
    // it and was there first.
    let f = eevdf();
    let (mut rq, mut ts) = enqueue_all(&f, &[0, 1]);
    assert_eq!(rq.pick(&ts, &f), 0);
    rq.set_next(&mut ts, 0, 0);
    rq.put_prev(&mut ts, 0);
    assert_eq!(rq.pick(&ts, &f), 1);
}

#[test]
fn the_running_entity_keeps_the_cpu_only_with_a_strictly_smaller_key() {
    // CFS: curr (0) and a tree entity (1) at the same vruntime: the tree's leftmost is picked.
    let f = cfs();
    let (mut rq, mut ts) = enqueue_all(&f, &[0, 1]);
    rq.set_next(&mut ts, 0, 0);
    assert_eq!(ts[0].vruntime, ts[1].vruntime);
    assert_eq!(rq.pick(&ts, &f), 1);
    // A nanosecond less and curr stays.
    ts[0].vruntime -= 1;
    assert_eq!(rq.pick(&ts, &f), 0);
}
