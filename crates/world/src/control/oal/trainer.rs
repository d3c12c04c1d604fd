//! Where OAL's tree is trained.
//!
//! - **Inline** (the simulator): the tree is fitted at the tick that asks for it and used at
//!   once; a retrain costs milliseconds of wall time between events and nothing of simulated
//!   time, and the run stays deterministic.
//! - **Background** (the kernel backend's emulator, `crates/emu/src/oal.rs`): the emulator's
//!   packet loop runs on the real clock, and a retrain on 10,000 items takes 15–30 ms there,
//!   which would hold every packet due meanwhile. The items go to a worker thread instead, and
//!   the tree is used from the first tick after it is ready, as an AP training beside its
//!   datapath would. [GAP] A retrain that falls due while the previous one still runs is
//!   skipped.
//!
//! Either way the same `ClassTree::fit` trains on the same items (`Oal::step` orders them).

use super::cart::{ClassTree, TreeParams};
use super::window::N_AP_FEATURES;
use std::sync::{mpsc, Mutex};

/// Items to train on; the buffers come back with the tree, for reuse.
struct Job {
    x: Vec<f64>,
    y: Vec<u8>,
    params: TreeParams,
}

struct Done {
    tree: ClassTree,
    x: Vec<f64>,
    y: Vec<u8>,
}

/// The worker thread's two ends.
pub struct Worker {
    jobs: mpsc::Sender<Job>,
    /// In a mutex only to make the controller `Sync` (one thread calls it).
    done: Mutex<mpsc::Receiver<Done>>,
    busy: bool,
}

#[derive(Default)]
pub enum Trainer {
    #[default]
    Inline,
    Background(Worker),
}

impl Trainer {
    /// A trainer on a worker thread that first runs `setup` (the emulator gives it ordinary
    /// scheduling off its own CPU).
    pub fn background(setup: fn()) -> Trainer {
        let (jobs, inbox) = mpsc::channel::<Job>();
        let (outbox, done) = mpsc::channel::<Done>();
        std::thread::Builder::new()
            .name("oal-trainer".into())
            .spawn(move || {
                setup();
                // Ends when the trainer (its sender) is dropped.
                while let Ok(job) = inbox.recv() {
                    let tree = ClassTree::fit(&job.x, &job.y, N_AP_FEATURES, job.params);
                    if outbox.send(Done { tree, x: job.x, y: job.y }).is_err() {
                        return;
                    }
                }
            })
            .expect("spawn OAL's trainer thread");
        Trainer::Background(Worker {
            jobs,
            done: Mutex::new(done),
            busy: false,
        })
    }

    /// Whether a training is under way (its items are away).
    pub fn busy(&self) -> bool {
        matches!(self, Trainer::Background(w) if w.busy)
    }

    /// Trains on the items in `x`, `y`: the tree at once (inline), or `None` and later from
    /// [`Trainer::finished`] (background; the buffers go with the items and come back).
    pub fn start(&mut self, x: &mut Vec<f64>, y: &mut Vec<u8>, params: TreeParams) -> Option<ClassTree> {
        match self {
            Trainer::Inline => Some(ClassTree::fit(x, y, N_AP_FEATURES, params)),
            Trainer::Background(w) => {
                let job = Job { x: std::mem::take(x), y: std::mem::take(y), params };
                w.busy = w.jobs.send(job).is_ok();
                None
            }
        }
    }

    /// The tree the worker finished since the last call, if any (its buffers back into `x`, `y`).
    pub fn finished(&mut self, x: &mut Vec<f64>, y: &mut Vec<u8>) -> Option<ClassTree> {
        let Trainer::Background(w) = self else {
            return None;
        };
        let done = match w.done.lock().expect("one caller").try_recv() {
            Ok(done) => done,
            Err(mpsc::TryRecvError::Empty) => return None,
            // The worker died (a panic in `ClassTree::fit`): say so rather than never
            // retraining again with `busy` stuck.
            Err(mpsc::TryRecvError::Disconnected) => {
                panic!("OAL's trainer thread ended without returning its tree")
            }
        };
        w.busy = false;
        *x = done.x;
        *y = done.y;
        Some(done.tree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_background_tree_equals_the_inline_one_and_the_buffers_come_back() {
        // 2,000 items: class 3 where feature 0 is above 0.5 and feature 5 above 0.2, else 0.
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let mut r = 0x2545_f491u64;
        for _ in 0..2000 {
            let row: Vec<f64> = (0..N_AP_FEATURES)
                .map(|_| {
                    r = r.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (r >> 11) as f64 / (1u64 << 53) as f64
                })
                .collect();
            y.push(if row[0] > 0.5 && row[5] > 0.2 { 3 } else { 0 });
            x.extend(row);
        }
        let params = TreeParams { min_samples_split: 20, min_samples_leaf: 10, max_depth: 8 };
        let inline = Trainer::Inline.start(&mut x.clone(), &mut y.clone(), params).expect("at once");
        let mut t = Trainer::background(|| {});
        let (mut bx, mut by) = (x.clone(), y.clone());
        assert!(t.start(&mut bx, &mut by, params).is_none());
        assert!(t.busy() && bx.is_empty());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let tree = loop {
            if let Some(tree) = t.finished(&mut bx, &mut by) {
                break tree;
            }
            assert!(std::time::Instant::now() < deadline, "the worker never finished");
            std::thread::sleep(std::time::Duration::from_millis(1));
        };
        assert_eq!(tree, inline);
        assert!(!t.busy());
        assert_eq!((bx, by), (x, y));
    }
}
