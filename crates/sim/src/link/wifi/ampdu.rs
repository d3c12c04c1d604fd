//! A-MPDU aggregation with Block Ack (IEEE Std 802.11-2016 10.24.7; `aggregation = true`,
//! 802.11n/ac): a transmitter that wins the channel sends one A-MPDU to the station of its
//! frame, as many MPDUs as fit in 64, a 4 ms PPDU (or the access category's TXOP limit) and the
//! peer's A-MPDU length; each MPDU is received or not on its own, the recipient's Block Ack
//! reports them, and the ones it does not acknowledge go first in the transmitter's next
//! A-MPDU, each dropped at `retry_limit` transmissions (a MAC drop). docs/radio.md lists the
//! differences from the standard.
//!
//! Minstrel-HT with A-MPDU (`mcs = "minstrel"`), as Linux 5.10's rc80211_minstrel_ht.c sees an
//! ath9k-like driver:
//! - every MPDU taken from a queue asks Minstrel whether it samples (`minstrel_ht_get_rate`
//!   per frame); a probe MPDU is never put after an aggregate's first subframe (ath9k
//!   `ath_tx_form_aggr`) and is sent alone (`ath_lookup_rate` gives a probe no aggregation),
//!   its chain the probe rate once then the rate table's second and third rates; any other
//!   A-MPDU takes the current rate table when it is built (ath9k `ath_set_rates` per
//!   aggregate), and its length is limited so that it fits 4 ms (or the TXOP limit) at the
//!   chain's slowest rate (`ath_lookup_rate`);
//! - an A-MPDU that gets no Block Ack (every MPDU lost, or a collision) is sent again at its
//!   chain's next attempt, the way the hardware retries an aggregate through its rate series;
//!   the MPDUs each count the transmission towards `retry_limit`;
//! - one tx status per aggregate when a Block Ack comes back or the chain is exhausted: the
//!   chain's attempts, `ampdu_len` = the MPDUs of its last PPDU, `ampdu_ack_len` = those the
//!   Block Ack acknowledged ([`Minstrel::ampdu_status`]).
//! - [GAP] an aggregate retried after no Block Ack is rebuilt (the frames now held, then the
//!   queue), so it may carry more MPDUs than its first attempt; its status counts the last.
//! - [GAP] the chain's exhaustion ends the status report, not the MPDUs: they stay held for the
//!   next A-MPDU (with a new chain) until `retry_limit` (ath9k retries subframes in software
//!   up to its own limit of 30).

use super::minstrel::{self, Chain, Minstrel};
use super::{phy, ppdu_source, Frame, Owner, Wifi};
use crate::link::{DropReason, LinkOutput};
use crate::Nanos;

/// The rate chain an A-MPDU in progress walks, and how far (its PPDU transmissions so far).
#[derive(Debug, Clone, Copy)]
pub(super) struct PpduRate {
    /// The port whose Minstrel chose it.
    port: usize,
    chain: Chain,
    tries: u32,
}

impl Wifi {
    /// Takes the next frame of transmitter `i`'s queue for `station`, if any.
    fn take_more(
        &mut self,
        i: usize,
        station: usize,
        now: Nanos,
        out: &mut Vec<LinkOutput>,
    ) -> Option<Frame> {
        let ap = matches!(self.tx[i].owner, Owner::Ap(_));
        let p = self.dequeue(ap, station, now, out)?;
        self.stats.sojourn.record(now - p.enqueued_at);
        let port = if ap { 2 * station } else { 2 * station + 1 };
        let probe = self.minstrel[port].as_mut().and_then(Minstrel::sample_rate);
        Some(Frame {
            id: p.id,
            bytes: p.bytes,
            station,
            port,
            enqueued_at: p.enqueued_at,
            attempts: 0,
            chain: None,
            probe,
        })
    }

    /// The MCS of transmitter `i`'s next A-MPDU headed by `head`, and the MCS its length is
    /// limited at: with Minstrel, the next attempt of the chain of the aggregate in progress,
    /// or of a new one (the probe rate's chain if `head` samples, else the rate table), and the
    /// chain's slowest rate (ath9k `ath_lookup_rate`: the shortest 4 ms frame length over the
    /// rate series, so that every attempt of the series fits).
    fn ampdu_mcs(&mut self, i: usize, head: &Frame, now: Nanos) -> (usize, usize) {
        let Some(m) = self.minstrel[head.port].as_mut() else {
            let mcs = self.attempt_mcs(head, now);
            return (mcs, mcs);
        };
        let r = match self.tx[i].ppdu {
            Some(r) if r.port == head.port => r,
            _ => PpduRate {
                port: head.port,
                chain: m.table(head.probe),
                tries: 0,
            },
        };
        self.tx[i].ppdu = Some(r);
        let mcs = minstrel::chain_rate(&r.chain, r.tries).expect("an exhausted chain is replaced");
        let slowest = r
            .chain
            .iter()
            .map(|&(m, _)| m)
            .min_by_key(|&m| self.phy.rate_bps(m))
            .expect("a chain has slots");
        (mcs, slowest)
    }

    /// After an A-MPDU's PPDU of transmitter `i` (Minstrel only): its chain advances; with a
    /// Block Ack (`acked` > 0) or at the chain's end, Minstrel gets the aggregate's status.
    fn ampdu_report(&mut self, i: usize, end: Nanos, sent: usize, acked: usize) {
        let Some(mut r) = self.tx[i].ppdu.take() else {
            return;
        };
        r.tries += 1;
        if acked == 0 && minstrel::chain_rate(&r.chain, r.tries).is_some() {
            self.tx[i].ppdu = Some(r);
            return;
        }
        if let Some(m) = self.minstrel[r.port].as_mut() {
            m.ampdu_status(end, &r.chain, r.tries, sent as u32, acked as u32);
        }
    }

    /// Transmitter `i`'s A-MPDU: its frame, the frames it holds, then frames of the same
    /// station's queue, as many as fit in 64 MPDUs, 4 ms (at the slowest rate of a Minstrel
    /// chain) and the peer's A-MPDU length, up to (not including) a probe frame after the
    /// first; a probe frame alone. The rest stay held. Returns (MCS, MPDUs, air time).
    fn build_ampdu(
        &mut self,
        i: usize,
        now: Nanos,
        out: &mut Vec<LinkOutput>,
    ) -> (usize, Vec<Frame>, Nanos) {
        let head = self.tx[i].frame.take().expect("a sender has a frame");
        let (mcs, limit_mcs) = self.ampdu_mcs(i, &head, now);
        // A probe frame goes alone (ath9k `ath_lookup_rate`: no aggregation of a probe).
        let alone = head.probe.is_some();
        let station = head.station;
        let mut mpdus = vec![head];
        mpdus.extend(self.tx[i].held.drain(..));
        let mut taken = 0;
        while !alone && mpdus.len() < phy::AMPDU_MAX_MPDUS {
            match self.take_more(i, station, now, out) {
                Some(f) => {
                    // A probe frame ends the aggregate (it heads the next): take no more.
                    let probe = f.probe.is_some();
                    mpdus.push(f);
                    taken += 1;
                    if probe {
                        break;
                    }
                }
                None => break,
            }
        }
        let limit_ns = self.tx[i].access.ppdu_limit_ns();
        let mut len: u64 = 0;
        let mut n = 0;
        for f in &mpdus {
            let next = len + u64::from(self.phy.subframe_bytes(f.bytes));
            let bytes = u32::try_from(next).unwrap_or(u32::MAX);
            if n > 0
                && (alone
                    || next > self.phy.ampdu_max_bytes()
                    || self.phy.txtime_ns(bytes, limit_mcs) > limit_ns
                    || f.probe.is_some())
            {
                break;
            }
            len = next;
            n += 1;
        }
        let rest = mpdus.split_off(n);
        // The frames taken from the queue just now that did not fit go back (a requeue).
        self.counters[mpdus[0].port].requeues += rest.len().min(taken) as u64;
        self.tx[i].held.extend(rest);
        let air = self.phy.ampdu_ns(mpdus.iter().map(|f| f.bytes), mcs);
        (mcs, mpdus, air)
    }

    /// The A-MPDUs whose backoff ends at `now` go on the air: alone, each MPDU is received with
    /// its own probability once the PPDU's header is; together, they collide.
    pub(super) fn transmit_ampdus(
        &mut self,
        now: Nanos,
        senders: &[usize],
        out: &mut Vec<LinkOutput>,
    ) {
        let ppdus: Vec<(usize, usize, Vec<Frame>, Nanos)> = senders
            .iter()
            .map(|&i| {
                let (mcs, mpdus, air) = self.build_ampdu(i, now, out);
                (i, mcs, mpdus, air)
            })
            .collect();
        let single = ppdus.len() == 1;
        if !single {
            let bss = &self.station_ap;
            self.survey
                .collision(ppdus.iter().map(|p| ppdu_source(bss, p.2[0].port, p.3)));
            let longest = ppdus.iter().map(|p| p.3).max().expect("senders");
            self.busy_until(now + longest + phy::eifs_ns());
        }
        for (i, mcs, mpdus, air) in ppdus {
            let station = mpdus[0].station;
            let port = mpdus[0].port;
            self.counters[port].last_mcs = Some(mcs);
            self.charge_airtime(port, air);
            let received: Vec<bool> = if !single {
                self.counters[port].collisions += 1;
                vec![false; mpdus.len()]
            } else {
                match self.snr[station].at(now) {
                    None => vec![true; mpdus.len()],
                    Some(db) => {
                        let h = self.phy.header_success(db);
                        let header = h >= 1.0 || self.phy_rng.uniform() < h;
                        mpdus
                            .iter()
                            .map(|f| {
                                let p = self.phy.subframe_success(f.bytes, mcs, db);
                                header && (p >= 1.0 || self.phy_rng.uniform() < p)
                            })
                            .collect()
                    }
                }
            };
            self.settle(i, now, now + air, mcs, mpdus, &received, single, out);
        }
    }

    /// After an A-MPDU ending at `end`: received MPDUs are delivered (the BlockAck reports
    /// them), the others retried in order or, at the retry limit, dropped. A BlockAck (any
    /// MPDU received) is a success: CW resets and the medium is idle SIFS + BlockAck + DIFS
    /// after the PPDU; none received (the recipient sends no BlockAck) is a failure as a lost
    /// frame: CW doubles, EIFS.
    #[allow(clippy::too_many_arguments)]
    fn settle(
        &mut self,
        i: usize,
        now: Nanos,
        end: Nanos,
        mcs: usize,
        mpdus: Vec<Frame>,
        received: &[bool],
        single: bool,
        out: &mut Vec<LinkOutput>,
    ) {
        let any = received.iter().any(|&r| r);
        let acked = received.iter().filter(|&&r| r).count();
        self.ampdu_report(i, end, mpdus.len(), acked);
        if single {
            let port = mpdus[0].port;
            if any {
                let ba_ns = self.phy.block_ack_ns(mcs);
                let (bss, by_ap, air) = ppdu_source(&self.station_ap, port, end - now);
                self.survey.exchange(bss, by_ap, air, ba_ns);
                self.busy_until(end + phy::SIFS_NS + ba_ns + phy::DIFS_NS);
            } else {
                let (bss, by_ap, air) = ppdu_source(&self.station_ap, port, end - now);
                self.survey.frame(bss, by_ap, air);
                self.busy_until(end + phy::eifs_ns());
                self.counters[port].phy_errors += 1;
            }
        }
        let mut kept = Vec::new();
        let mut delivered_bytes = 0;
        for (mut f, &ok) in mpdus.into_iter().zip(received) {
            f.attempts += 1;
            let c = &mut self.counters[f.port];
            if f.attempts > 1 {
                c.tx_retries += 1;
            }
            if ok {
                c.tx_packets += 1;
                c.tx_bytes += u64::from(f.bytes);
                delivered_bytes += f.bytes;
                out.push(LinkOutput::Deliver {
                    id: f.id,
                    at: end + self.delay_ns,
                });
                self.stats.departed_bytes += u64::from(f.bytes);
                self.stats.departed_pkts += 1;
            } else if f.attempts >= self.retry_limit {
                c.tx_failed += 1;
                out.push(LinkOutput::Drop {
                    id: f.id,
                    reason: DropReason::MacRetryLimit,
                });
                self.stats.mac_drops += 1;
            } else {
                kept.push(f);
            }
        }
        if delivered_bytes > 0 {
            self.on_air = (now, end, delivered_bytes);
        }
        // Retried MPDUs go first, before any frame held back.
        for f in kept.into_iter().rev() {
            self.tx[i].held.push_front(f);
        }
        self.load(i, now, out);
        let access = self.tx[i].access;
        let cw = if any {
            access.cw_min
        } else {
            (2 * self.tx[i].cw + 1).min(access.cw_max)
        };
        self.tx[i].cw = cw;
        self.tx[i].backoff = Some(self.draw_backoff(cw));
    }
}
