// ns-3 twin of bench/dumbbell-10x100.toml, built and run by bench/compare-ns3.
//
//   sender --(10 Gbit/s, 0 ms, 100000-pkt device queue)--> router
//   router --(100 Mbit/s, 20 ms, 1000-pkt DropTail device queue)--> receiver   (bottleneck)
//   receiver --(1 Gbit/s, 20 ms)--> router                                  (ACK direction)
//
// RTT 40 ms. No traffic-control queue discs anywhere (removed after address assignment), so the
// router's 1000-packet DropTail device queue is the bottleneck's only buffer, as in rove.
// N BulkSend flows (unlimited bytes) to N PacketSinks, all starting at t = 0, MSS 1448, SACK and
// timestamps at ns-3's defaults (on), socket buffers 64 MiB so that congestion control, not the
// receive window, limits each flow. Prints one line:
//   goodput_mbps=<sum of sink bytes * 8 / duration> utilization=<bottleneck busy fraction> ...
//
// Usage: dumbbell --cc=cubic|reno|bbr [--flows=10] [--duration=60]
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdio>

using namespace ns3;

static uint64_t g_bottleneckTxBytes = 0;

static void
OnBottleneckTx(Ptr<const Packet> p)
{
    g_bottleneckTxBytes += p->GetSize();
}

int
main(int argc, char* argv[])
{
    std::string cc = "cubic";
    uint32_t flows = 10;
    double duration = 60.0;
    CommandLine cmd(__FILE__);
    cmd.AddValue("cc", "congestion control: cubic, reno or bbr", cc);
    cmd.AddValue("flows", "number of flows", flows);
    cmd.AddValue("duration", "simulated seconds", duration);
    cmd.Parse(argc, argv);

    TypeId ccType;
    if (cc == "cubic")
    {
        ccType = TcpCubic::GetTypeId();
    }
    else if (cc == "reno")
    {
        ccType = TcpNewReno::GetTypeId();
    }
    else if (cc == "bbr")
    {
        ccType = TcpBbr::GetTypeId();
        // ns-3's BBR needs the socket's pacing on (as in examples/tcp/tcp-bbr-example.cc).
        Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(true));
    }
    else
    {
        std::fprintf(stderr, "unknown --cc=%s\n", cc.c_str());
        return 2;
    }
    Config::SetDefault("ns3::TcpL4Protocol::SocketType", TypeIdValue(ccType));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(1448));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(64 << 20));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(64 << 20));

    NodeContainer nodes;
    nodes.Create(3);
    Ptr<Node> sender = nodes.Get(0);
    Ptr<Node> router = nodes.Get(1);
    Ptr<Node> receiver = nodes.Get(2);

    PointToPointHelper access;
    access.SetDeviceAttribute("DataRate", StringValue("10Gbps"));
    access.SetChannelAttribute("Delay", StringValue("0ms"));
    access.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("100000p"));
    NetDeviceContainer accessDevs = access.Install(sender, router);

    PointToPointHelper bottleneck;
    bottleneck.SetDeviceAttribute("DataRate", StringValue("100Mbps"));
    bottleneck.SetChannelAttribute("Delay", StringValue("20ms"));
    bottleneck.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1000p"));
    NetDeviceContainer bnDevs = bottleneck.Install(router, receiver);
    // The reverse (ACK) direction: receiver's device sends at 1 Gbit/s over the same 20 ms channel.
    bnDevs.Get(1)->SetAttribute("DataRate", StringValue("1Gbps"));

    InternetStackHelper stack;
    stack.Install(nodes);
    Ipv4AddressHelper addr;
    addr.SetBase("10.1.1.0", "255.255.255.0");
    addr.Assign(accessDevs);
    addr.SetBase("10.1.2.0", "255.255.255.0");
    Ipv4InterfaceContainer bnIfs = addr.Assign(bnDevs);
    // Address assignment installs a default root queue disc (FqCoDel) on every device; remove
    // them all so the device queues are the only buffers.
    TrafficControlHelper tch;
    tch.Uninstall(accessDevs);
    tch.Uninstall(bnDevs);
    Ipv4GlobalRoutingHelper::PopulateRoutingTables();

    bnDevs.Get(0)->TraceConnectWithoutContext("PhyTxEnd", MakeCallback(&OnBottleneckTx));

    ApplicationContainer sinks;
    ApplicationContainer sources;
    for (uint32_t i = 0; i < flows; ++i)
    {
        uint16_t port = 5000 + i;
        PacketSinkHelper sink("ns3::TcpSocketFactory",
                              InetSocketAddress(Ipv4Address::GetAny(), port));
        sinks.Add(sink.Install(receiver));
        BulkSendHelper src("ns3::TcpSocketFactory",
                           InetSocketAddress(bnIfs.GetAddress(1), port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(1448));
        sources.Add(src.Install(sender));
    }
    sinks.Start(Seconds(0));
    sources.Start(Seconds(0));
    sources.Stop(Seconds(duration));

    Simulator::Stop(Seconds(duration));
    Simulator::Run();

    uint64_t rx = 0;
    for (uint32_t i = 0; i < sinks.GetN(); ++i)
    {
        rx += DynamicCast<PacketSink>(sinks.Get(i))->GetTotalRx();
    }
    double goodput = rx * 8.0 / duration / 1e6;
    double util = g_bottleneckTxBytes * 8.0 / (100e6 * duration);
    std::printf("goodput_mbps=%.4f utilization=%.6f bottleneck_tx_bytes=%llu sink_rx_bytes=%llu\n",
                goodput,
                util,
                (unsigned long long)g_bottleneckTxBytes,
                (unsigned long long)rx);
    Simulator::Destroy();
    return 0;
}
