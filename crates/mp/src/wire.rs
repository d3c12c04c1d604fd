//! How a connection talks to whoever drives it ([`SubflowNet`]), and the per-subflow adapter
//! that lets a rove-tcp endpoint use it as its [`Wire`] while stamping the MPTCP fields.

use crate::subflow::DsnMap;
use rove_sim::packet::{Direction, Kind, Packet};
use rove_sim::Nanos;
use rove_tcp::{Timer, Wire};

/// What a connection needs from its driver: a [`Wire`] per subflow.
pub trait SubflowNet {
    fn now(&self) -> Nanos;
    /// Puts `packet` on subflow `sub`'s forward path (`Direction::Data`, sender to receiver) or
    /// on its ACK path (`Direction::Ack`). The driver fills in the routing fields.
    fn transmit(&mut self, sub: usize, direction: Direction, packet: Packet);
    /// Asks for `Connection::on_timer(sub, timer)` at or after `at`.
    fn arm(&mut self, sub: usize, timer: Timer, at: Nanos);
}

/// What the adapter writes into each outgoing packet.
pub(crate) enum Stamp<'a> {
    /// Sender side: the DSN mapped to each data segment's subflow sequence number.
    Dsn(&'a DsnMap),
    /// Receiver side: the connection's DATA_ACK.
    DataAck(u64),
}

/// Subflow `sub`'s view of the driver, as a rove-tcp [`Wire`].
pub(crate) struct SubWire<'a, N: SubflowNet> {
    pub net: &'a mut N,
    pub sub: usize,
    pub stamp: Stamp<'a>,
}

impl<N: SubflowNet> Wire for SubWire<'_, N> {
    #[inline]
    fn now(&self) -> Nanos {
        self.net.now()
    }

    #[inline]
    fn transmit(&mut self, mut p: Packet) {
        p.subflow = Some(self.sub as u8);
        let direction = match self.stamp {
            Stamp::Dsn(map) => {
                if p.kind == Kind::Segment {
                    p.dsn = map.dsn(p.seq);
                }
                Direction::Data
            }
            Stamp::DataAck(data_ack) => {
                p.dsn = data_ack;
                Direction::Ack
            }
        };
        self.net.transmit(self.sub, direction, p);
    }

    #[inline]
    fn arm(&mut self, timer: Timer, at: Nanos) {
        self.net.arm(self.sub, timer, at);
    }
}
