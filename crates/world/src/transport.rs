//! The one kind of endpoint the world drives: a transport connection over one or more subflows.
//!
//! A single-path TCP flow is a connection with one subflow (index 0) as far as the world is
//! concerned: it starts, receives packets and fires timers through the same calls as a
//! multipath connection, and talks to the world through the same [`SubflowNet`]. The world
//! therefore has one set of events, one routing driver and one results path for both; what
//! differs (a data sequence space, a scheduler, a reordering buffer) stays inside `rove_mp`.

use rove_mp::{Connection, SubflowNet};
use rove_sim::packet::{Direction, Packet};
use rove_sim::Nanos;
use rove_tcp::receiver::TcpReceiver;
use rove_tcp::sender::TcpSender;
use rove_tcp::{Timer, Wire};

pub enum Transport {
    /// One TCP connection: the sender at the flow's source, the receiver at its destination.
    Tcp {
        sender: TcpSender,
        receiver: TcpReceiver,
    },
    /// A multipath connection over several TCP subflows.
    Multipath(Connection),
}

impl Transport {
    pub fn subflow_count(&self) -> usize {
        match self {
            Transport::Tcp { .. } => 1,
            Transport::Multipath(c) => c.subflows.len(),
        }
    }

    /// The sender of subflow `sub`.
    pub fn sender(&self, sub: usize) -> &TcpSender {
        match self {
            Transport::Tcp { sender, .. } => sender,
            Transport::Multipath(c) => &c.subflows[sub].sender,
        }
    }

    pub fn sender_mut(&mut self, sub: usize) -> &mut TcpSender {
        match self {
            Transport::Tcp { sender, .. } => sender,
            Transport::Multipath(c) => &mut c.subflows[sub].sender,
        }
    }

    /// The receiver of subflow `sub`.
    pub fn receiver(&self, sub: usize) -> &TcpReceiver {
        match self {
            Transport::Tcp { receiver, .. } => receiver,
            Transport::Multipath(c) => &c.subflows[sub].receiver,
        }
    }

    pub fn receiver_mut(&mut self, sub: usize) -> &mut TcpReceiver {
        match self {
            Transport::Tcp { receiver, .. } => receiver,
            Transport::Multipath(c) => &mut c.subflows[sub].receiver,
        }
    }

    /// The multipath connection, if this is one.
    pub fn connection(&self) -> Option<&Connection> {
        match self {
            Transport::Multipath(c) => Some(c),
            Transport::Tcp { .. } => None,
        }
    }

    pub fn connection_mut(&mut self) -> Option<&mut Connection> {
        match self {
            Transport::Multipath(c) => Some(c),
            Transport::Tcp { .. } => None,
        }
    }

    /// In-order bytes the receiving application got.
    pub fn bytes_delivered(&self) -> u64 {
        match self {
            Transport::Tcp { receiver, .. } => receiver.bytes_delivered,
            Transport::Multipath(c) => c.reorder.bytes_delivered,
        }
    }

    /// A finite transfer that is fully acknowledged.
    pub fn is_complete(&self) -> bool {
        match self {
            Transport::Tcp { sender, .. } => sender.is_complete(),
            Transport::Multipath(c) => c.is_complete(),
        }
    }

    /// The transfer's completion time (last byte acknowledged), if it completed.
    pub fn completed_at(&self) -> Option<Nanos> {
        match self {
            Transport::Tcp { sender, .. } => sender.stats.completed_at,
            Transport::Multipath(c) => c.data.completed_at,
        }
    }

    /// Opens the connection (the first SYN).
    pub fn start<N: SubflowNet>(&mut self, net: &mut N) {
        match self {
            Transport::Tcp { sender, .. } => sender.start(&mut SubflowWire::data(net, 0)),
            Transport::Multipath(c) => c.start(net),
        }
    }

    /// A packet of subflow `sub` reached its endpoint: data at the receiver, an ACK at the sender.
    pub fn on_packet<N: SubflowNet>(&mut self, sub: usize, p: &Packet, net: &mut N) {
        match self {
            Transport::Tcp { sender, receiver } => match p.direction {
                Direction::Data => receiver.on_packet(p, &mut SubflowWire::ack(net, 0)),
                Direction::Ack => sender.on_packet(p, &mut SubflowWire::data(net, 0)),
            },
            Transport::Multipath(c) => c.on_packet(sub, p, p.direction, net),
        }
    }

    /// Timer `timer` of subflow `sub` fired.
    pub fn on_timer<N: SubflowNet>(&mut self, sub: usize, timer: Timer, net: &mut N) {
        match self {
            Transport::Tcp { sender, receiver } => {
                if timer == Timer::DelayedAck {
                    receiver.on_timer(timer, &mut SubflowWire::ack(net, 0));
                } else {
                    sender.on_timer(timer, &mut SubflowWire::data(net, 0));
                }
            }
            Transport::Multipath(c) => c.on_timer(sub, timer, net),
        }
    }
}

/// One TCP endpoint's view of a [`SubflowNet`]: its subflow and the direction it sends in.
struct SubflowWire<'a, N: SubflowNet> {
    net: &'a mut N,
    sub: usize,
    direction: Direction,
}

impl<'a, N: SubflowNet> SubflowWire<'a, N> {
    fn data(net: &'a mut N, sub: usize) -> Self {
        SubflowWire {
            net,
            sub,
            direction: Direction::Data,
        }
    }

    fn ack(net: &'a mut N, sub: usize) -> Self {
        SubflowWire {
            net,
            sub,
            direction: Direction::Ack,
        }
    }
}

impl<N: SubflowNet> Wire for SubflowWire<'_, N> {
    #[inline]
    fn now(&self) -> Nanos {
        self.net.now()
    }

    #[inline]
    fn transmit(&mut self, packet: Packet) {
        self.net.transmit(self.sub, self.direction, packet);
    }

    #[inline]
    fn arm(&mut self, timer: Timer, at: Nanos) {
        self.net.arm(self.sub, timer, at);
    }
}
