//! The one kind of endpoint the world drives: a transport connection over one or more subflows.
//!
//! A single-path TCP flow is a connection with one subflow (index 0) as far as the world is
//! concerned: it starts, receives packets and fires timers through the same calls as a
//! multipath connection, and talks to the world through the same [`SubflowNet`]. The world
//! therefore has one set of events, one routing driver and one results path for both; what
//! differs (a data sequence space, a scheduler, a reordering buffer) stays inside `rove_mp`.

use crate::datagram::{DatagramSink, DatagramSource};
use rove_mp::{Connection, SubflowNet};
use rove_sim::packet::{Direction, Packet};
use rove_sim::Nanos;
use rove_tcp::receiver::TcpReceiver;
use rove_tcp::sender::TcpSender;
use rove_tcp::{segment_payloads, Timer, Wire};

pub enum Transport {
    /// One TCP connection: the sender at the flow's source, the receiver at its destination.
    Tcp {
        sender: TcpSender,
        receiver: TcpReceiver,
    },
    /// A multipath connection over several TCP subflows.
    Multipath(Connection),
    /// An unresponsive source and its sink (one "subflow", no ACK path).
    Datagram {
        source: DatagramSource,
        sink: DatagramSink,
    },
}

impl Transport {
    pub fn subflow_count(&self) -> usize {
        match self {
            Transport::Tcp { .. } | Transport::Datagram { .. } => 1,
            Transport::Multipath(c) => c.subflows.len(),
        }
    }

    /// Whether the flow is TCP (single-path or multipath): it has senders and receivers.
    pub fn is_tcp(&self) -> bool {
        !matches!(self, Transport::Datagram { .. })
    }

    /// The TCP sender of subflow `sub` (`None` for an unresponsive flow).
    pub fn tcp_sender(&self, sub: usize) -> Option<&TcpSender> {
        match self {
            Transport::Tcp { sender, .. } => Some(sender),
            Transport::Multipath(c) => Some(&c.subflows[sub].sender),
            Transport::Datagram { .. } => None,
        }
    }

    /// The TCP sender of subflow `sub`. Panics for an unresponsive flow (check [`is_tcp`]).
    ///
    /// [`is_tcp`]: Self::is_tcp
    pub fn sender(&self, sub: usize) -> &TcpSender {
        self.tcp_sender(sub)
            .expect("an unresponsive flow has no TCP sender")
    }

    pub fn sender_mut(&mut self, sub: usize) -> &mut TcpSender {
        match self {
            Transport::Tcp { sender, .. } => sender,
            Transport::Multipath(c) => &mut c.subflows[sub].sender,
            Transport::Datagram { .. } => panic!("an unresponsive flow has no TCP sender"),
        }
    }

    /// The TCP receiver of subflow `sub`. Panics for an unresponsive flow.
    pub fn receiver(&self, sub: usize) -> &TcpReceiver {
        match self {
            Transport::Tcp { receiver, .. } => receiver,
            Transport::Multipath(c) => &c.subflows[sub].receiver,
            Transport::Datagram { .. } => panic!("an unresponsive flow has no TCP receiver"),
        }
    }

    /// The multipath connection, if this is one.
    pub fn connection(&self) -> Option<&Connection> {
        match self {
            Transport::Multipath(c) => Some(c),
            _ => None,
        }
    }

    pub fn connection_mut(&mut self) -> Option<&mut Connection> {
        match self {
            Transport::Multipath(c) => Some(c),
            _ => None,
        }
    }

    /// Payload bytes the receiving application got (in order, for TCP).
    pub fn bytes_delivered(&self) -> u64 {
        match self {
            Transport::Tcp { receiver, .. } => receiver.bytes_delivered,
            Transport::Multipath(c) => c.reorder.bytes_delivered,
            Transport::Datagram { sink, .. } => sink.payload_bytes,
        }
    }

    /// The connection is established (its first subflow's, for a multipath flow): an
    /// application may start writing. Always true for an unresponsive source.
    pub fn is_established(&self) -> bool {
        match self {
            Transport::Tcp { sender, .. } => sender.is_established(),
            Transport::Multipath(c) => c.is_established(),
            Transport::Datagram { .. } => true,
        }
    }

    /// The receiving application's in-order point in segments: rcv_nxt, or the data-level
    /// rcv_nxt of a multipath connection (0 for an unresponsive source).
    pub fn in_order_segs(&self) -> u64 {
        match self {
            Transport::Tcp { receiver, .. } => receiver.rcv_nxt(),
            Transport::Multipath(c) => c.reorder.rcv_nxt,
            Transport::Datagram { .. } => 0,
        }
    }

    /// The application writes `bytes` into the connection's send buffer (a flow whose sender
    /// is fed by its application, `workload = "video" | "requests"`); what cwnd, the window
    /// and pacing allow leaves now. Panics on an unresponsive source.
    pub fn write<N: SubflowNet>(&mut self, bytes: u64, net: &mut N) {
        match self {
            Transport::Tcp { sender, .. } => {
                let now = net.now();
                for payload in segment_payloads(bytes) {
                    sender.feed(payload, now);
                }
                sender.push(&mut SubflowWire::data(net, 0));
            }
            Transport::Multipath(c) => c.write(bytes, net),
            Transport::Datagram { .. } => panic!("an unresponsive source has no send buffer"),
        }
    }

    /// Opens the connection (the first SYN), or sends an unresponsive source's first packet.
    pub fn start<N: SubflowNet>(&mut self, net: &mut N) {
        match self {
            Transport::Tcp { sender, .. } => sender.start(&mut SubflowWire::data(net, 0)),
            Transport::Multipath(c) => c.start(net),
            Transport::Datagram { source, .. } => send_datagram(source, net),
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
            Transport::Datagram { sink, .. } => sink.on_packet(p, net.now()),
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
            // The source's send timer (the pacing timer: "the next packet may leave").
            Transport::Datagram { source, .. } => send_datagram(source, net),
        }
    }
}

/// Sends an unresponsive source's packet due now and arms its timer for the next.
fn send_datagram<N: SubflowNet>(source: &mut DatagramSource, net: &mut N) {
    let (packet, next) = source.emit(net.now());
    if let Some(p) = packet {
        net.transmit(0, Direction::Data, p);
    }
    if let Some(at) = next {
        net.arm(0, Timer::Pacing, at);
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
