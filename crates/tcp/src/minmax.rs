//! Windowed running min/max, the three-sample estimator of Linux lib/win_minmax.c (Kathleen
//! Nichols' algorithm). It tracks the best, second-best and third-best samples over a window in
//! constant space; used for min RTT and for BBR's bandwidth filter.

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Sample {
    t: u64,
    v: u64,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct MinMax {
    s: [Sample; 3],
}

impl MinMax {
    pub fn get(&self) -> u64 {
        self.s[0].v
    }

    pub fn reset(&mut self, t: u64, v: u64) -> u64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// Updates a running max with `v` measured at `t`, over window `win`.
    pub fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        if val.v >= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if val.v >= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v >= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// Updates a running min with `v` measured at `t`, over window `win`.
    pub fn running_min(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = Sample { t, v };
        if val.v <= self.s[0].v || val.t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if val.v <= self.s[1].v {
            self.s[2] = val;
            self.s[1] = val;
        } else if val.v <= self.s[2].v {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// win_minmax.c minmax_subwin_update: expire samples that fell out of the window, and keep
    /// the second and third choices spread over it.
    fn subwin_update(&mut self, win: u64, val: Sample) -> u64 {
        let dt = val.t.wrapping_sub(self.s[0].t);
        if dt > win {
            self.s[0] = self.s[1];
            self.s[1] = self.s[2];
            self.s[2] = val;
            if val.t.wrapping_sub(self.s[0].t) > win {
                self.s[0] = self.s[1];
                self.s[1] = self.s[2];
                self.s[2] = val;
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn running_max_expires_old_peaks() {
        let mut m = MinMax::default();
        m.reset(0, 10);
        assert_eq!(m.running_max(10, 1, 5), 10);
        assert_eq!(m.running_max(10, 5, 7), 10);
        // The peak at t=0 is more than a window old at t=11: the best remaining sample wins.
        assert_eq!(m.running_max(10, 11, 3), 7);
    }

    #[test]
    fn running_min_tracks_new_minimum_immediately() {
        let mut m = MinMax::default();
        m.reset(0, 100);
        assert_eq!(m.running_min(1000, 10, 120), 100);
        assert_eq!(m.running_min(1000, 20, 50), 50);
        assert_eq!(m.running_min(1000, 2000, 80), 80);
    }
}
