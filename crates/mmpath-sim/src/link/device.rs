//! Device classes: the properties of a radio (and the host behind it) that the standards leave
//! open. Each is set once from the device's published facts and then used for every scenario;
//! see docs/models.md for where each number comes from.

use super::phy::{dmg, ht, vht};
use super::radio::{MacTiming, RadioPhy};
use super::spectrum::adjacent_rejection_db;
use crate::scenario::{at_most_secs, err, ChannelRelation, PathCfg, RateAdaptation, ScenarioError, Technology};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Device {
    pub name: &'static str,
    pub technology: Technology,
    /// Highest MCS the device uses.
    pub max_mcs: u8,
    /// MPDUs per A-MPDU (Block Ack window used).
    pub max_mpdus: u32,
    /// A-MPDU byte limit of the device (0 = the standard's).
    pub max_ampdu_bytes: u32,
    /// MSDUs the transmitter packs into one A-MSDU inside each MPDU of an A-MPDU (1 = no
    /// A-MSDU: one IP packet per MPDU).
    pub amsdu_msdus: u32,
    /// Longest A-MSDU MPDU the pair agrees on, octets (0 = the standard's maximum MPDU).
    pub max_amsdu_bytes: u32,
    /// Host/driver time per packet sent or received (one core for the interface).
    pub host_pkt_ns: u64,
    /// Extra host time per data packet the client (not the AP) sends, ns.
    pub client_tx_pkt_ns: u64,
    /// Frames the client's driver and firmware hold below the qdisc (their transmit
    /// descriptors), on top of the path's queue (`queue_bytes`, the qdisc); 0 = none modelled.
    /// They are held through a scan's dwell like the rest of the queue, and TCP Small Queues
    /// counts them until they are through the air (docs/models.md, "Mobility, scans, contention").
    pub client_tx_queue_frames: u32,
    /// Segments the client's receive path can merge into one skb (GRO) per driver batch
    /// (link/medium/host.rs `Gro`); 0 = no GRO modelled (each segment goes up alone). A path's
    /// `gro = false` turns it off.
    pub client_gro_msdus: u32,
    /// How much better than the standard's minimum sensitivity the receiver is, dB.
    pub rx_gain_db: f64,
    /// Transmit power plus both antennas' gains, dBm: RSSI = this - path loss.
    pub eirp_gain_dbm: f64,
    /// After a blockage or antenna turn, how long the beam takes to be re-trained and the
    /// link to carry data again.
    pub retrain_ms: f64,
    /// MCS indexes the device uses (its rate adaptation's ladder); empty = all up to max_mcs.
    pub mcs_set: &'static [u8],
    /// Descriptors of the driver's transmit ring below the qdisc (link/medium/ring.rs); 0 = no
    /// ring modelled (the path's queue is one drop-tail queue).
    pub tx_ring: u32,
    /// The qdisc limit the driver gives its interface, packets (`dev->tx_queue_len`); 0 = Linux's
    /// default (1000, DEFAULT_QUEUE_FRAMES). Used when the path sets no `queue_bytes`.
    pub tx_queue_len: u32,
    /// The AP's own driver, where the AP runs another build than the client: its TX ring,
    /// descriptors (0 = `tx_ring`, the same driver on both ends).
    pub ap_tx_ring: u32,
    /// The AP's kernel attaches fq_codel as the interface's qdisc with this packet limit (its
    /// `limit`; fq_codel ignores `tx_queue_len`): CoDel on the AP's qdisc (link/codel.rs). 0 =
    /// the qdisc is drop-tail (pfifo_fast) at `tx_queue_len`.
    pub ap_fq_codel_limit: u32,
    pub about: &'static str,
}

/// GRO limited only by the batch and its 64 KiB (link/medium/host.rs `Gro`).
pub const GRO_WHOLE_BATCH: u32 = u32::MAX;

/// The wil6210 driver's TX ring and qdisc length from Linux 4.10 on (wil6210.h
/// WIL_TX_RING_SIZE_ORDER_DEFAULT = 12, WIL_TX_Q_LEN_DEFAULT = 4000; the same in the later
/// Talyn-era drivers); the 2014 driver had order 9 (512) and left Linux's 1000 (docs/facts.md).
const WIL6210_4_10_TX_RING: u32 = 1 << 12;
const WIL6210_4_10_TX_QUEUE_LEN: u32 = 4000;

/// The Netgear X10's (R9000) wil6210 build and qdisc (docs/facts.md "Transmit ring"): its
/// wil6210.ko (qca-backports, ath-qca tree) defaults tx_ring_order to 10; its kernel (3.10.20-al,
/// sch_generic.c attach_one_default_qdisc) gives every interface fq_codel, limit 1024 packets
/// (sch_fq_codel.c fq_codel_init).
const X10_WIL6210_TX_RING: u32 = 1 << 10;
const X10_FQ_CODEL_LIMIT: u32 = 1024;

/// Seed 001's wil6210 laptop and Dell D5000 dock; seed 003's preset reuses its radio.
const WIL6210_DOCK: Device = Device {
    name: "wil6210-dock",
    technology: Technology::Dot11ad,
    max_mcs: 11,
    // wil6210 driver with its default mtu_max (2048-byte buffers): min(32, 64 KiB / 2048)
    // = 32 MPDUs per A-MPDU (wil6210.h, rx.c wil_agg_size); seed 001 did not change MTU.
    max_mpdus: 32,
    max_ampdu_bytes: 65_536,
    amsdu_msdus: 1,
    max_amsdu_bytes: 0,
    host_pkt_ns: 0,
    client_tx_pkt_ns: 0,
    client_tx_queue_frames: 0,
    // The laptop's wil6210 driver hands every frame for the local stack to napi_gro_receive
    // (txrx.c wil_netif_rx_any) and GRO flushes when the NAPI poll completes (the ring drained):
    // a reorder release merges within GRO's 64 KiB.
    client_gro_msdus: GRO_WHOLE_BATCH,
    rx_gain_db: 0.0,
    // Seed 001 section III: the two top rates (MCS 10 and 11) hold up to 20 ft (6.1 m) and no
    // further: there the RSSI is MCS 10's sensitivity (-55 dBm). In the lobby's channel
    // (seed001.py ENVIRONMENT: path-loss exponent 1.24, 68.1 dB at 1 m on channel 2):
    // -55 + 68.1 + 12.4 log10(6.1) = 22.8 dBm.
    eirp_gain_dbm: 22.8,
    retrain_ms: 500.0,
    // Seed 001, footnote 1: 385, 770, 1155, 1540, 1925, 2310, 3080, 3850 Mbit/s.
    mcs_set: &[1, 2, 4, 6, 7, 8, 10, 11],
    // Seed 001 does not name its driver version (docs/facts.md "Transmit ring"): no ring.
    tx_ring: 0,
    tx_queue_len: 0,
    ap_tx_ring: 0,
    ap_fq_codel_limit: 0,
    about: "seed 001's Wilocity wil6210 laptop + Dell D5000 dock: 8 SC rates, commodity rate adaptation",
};

/// The presets. Generic ones follow the standard alone (no host limit, minimum sensitivity).
pub const DEVICES: &[Device] = &[
    Device {
        name: "generic-11ad",
        technology: Technology::Dot11ad,
        max_mcs: 12, // SC MCS 1-12 (docs/facts.md: commodity devices use SC only)
        max_mpdus: 64,
        max_ampdu_bytes: 0,
        amsdu_msdus: 1,
        max_amsdu_bytes: 0,
        host_pkt_ns: 0,
        client_tx_pkt_ns: 0,
        client_tx_queue_frames: 0,
        // The wil6210 driver: napi_gro_receive for every frame, flushed when the poll completes.
        client_gro_msdus: GRO_WHOLE_BATCH,
        rx_gain_db: 0.0,
        // 10 dBm conducted + 2 x 15 dBi phased arrays, a typical 802.11ad budget.
        eirp_gain_dbm: 40.0,
        // docs/facts.md: commodity link re-establishment after blockage takes hundreds of ms to s.
        retrain_ms: 500.0,
        mcs_set: &[],
        // The standard says nothing of a driver ring: none.
        tx_ring: 0,
        tx_queue_len: 0,
        ap_tx_ring: 0,
        ap_fq_codel_limit: 0,
        about: "802.11ad SC MCS 1-12 as the standard defines it, no host limit",
    },
    Device {
        name: "panasonic-wigig",
        technology: Technology::Dot11ad,
        // Seed 000 Table 2: the module supports SC MCS 1-9.
        max_mcs: 9,
        // The Linux wil6210 driver (seed 000 runs it: MTU 7912 is its limit, docs/facts.md) caps
        // aggregation at WIL_MAX_AGG_WSIZE = 32 MPDUs and WIL_MAX_AMPDU_SIZE = 64 KiB
        // (drivers/net/wireless/ath/wil6210/wil6210.h; rx.c wil_agg_size sizes the window as
        // min(32, 64 KiB / (mtu_max + overhead))): 8 MPDUs of 7912 bytes, 32 of 1500. This
        // assumes the driver's mtu_max was the MTU of each experiment.
        max_mpdus: 32,
        max_ampdu_bytes: 65_536,
        amsdu_msdus: 1,
        max_amsdu_bytes: 0,
        // Seed 000: UDP at MTU 1500 reaches about 1 Gbit/s at MCS 8-9 whatever the signal,
        // i.e. the hosts move ~83 k packets/s: 1500 B x 8 / 1 Gbit/s = 12 us per packet.
        host_pkt_ns: 12_000,
        client_tx_pkt_ns: 0,
        client_tx_queue_frames: 0,
        // The Panasonic modules' driver is not published: no merge modelled.
        client_gro_msdus: 0,
        // How much better than the standard's minimum the receiver (or its RSSI scale) is, from
        // seed 000's weak-signal UDP results (Fig. 2: MTU 1500 UDP at MCS 8-9 as in the strong
        // case; Fig. 4: MTU 7912 UDP still rising at MCS 8, dropping at MCS 9), in seed 000's
        // office channel (seed000.py ENVIRONMENT: the reported RSSI, -65..-69 dBm, is the local
        // mean; 3GPP InH LOS fading of 2.9 dB around it). Those UDP results hold from 9 dB up to
        // ~10.5 dB (mmpath runs, docs/models.md "Losses TCP sees"); this is the lowest whole dB,
        // the same rule that gave 8 dB (MCS 8's -61 dBm met at -69 dBm) before the channel
        // faded. Plausible for hardware: Table 21-3 assumes a 10 dB noise figure and 5 dB of
        // implementation loss (as regenerated in Int. J. Antennas Propag. 2017, "60 GHz Modular
        // Antenna Array Link Budget Estimation with WiGig Baseband", Table 1).
        rx_gain_db: 9.0,
        // Not characterised by seed 000 (which reports RSSI, not distance); the generic budget.
        eirp_gain_dbm: 40.0,
        retrain_ms: 500.0,
        mcs_set: &[],
        // Seed 000 names no kernel or driver version (docs/facts.md "Transmit ring"): no ring.
        tx_ring: 0,
        tx_queue_len: 0,
        ap_tx_ring: 0,
        ap_fq_codel_limit: 0,
        about: "seed 000's Panasonic 802.11ad modules (laptops): SC MCS 1-9, ~83 kpps host",
    },
    WIL6210_DOCK,
    Device {
        // Seed 003's testbed: an Acer TravelMate laptop (Qualcomm QCA6320, the wil6210 driver's
        // first chip generation) <-> a Netgear Nighthawk X10 router (QCA9500). The client radio
        // is wil6210-dock's (32 MPDUs / 64 KiB aggregation, commodity rate adaptation over the
        // same SC rates); the link budget is not the Dell dock's but the X10's, for which mmpath
        // has no measurement and uses the generic one, as the other X10 presets do
        // (rog-phone-2-11ad, laptop-11ad).
        name: "travelmate-x10",
        eirp_gain_dbm: 40.0,
        // The laptop's driver: the wil6210 of Linux 4.10, the kernel seed 003 names
        // (docs/facts.md "Transmit ring"): a TX ring of 1 << WIL_TX_RING_SIZE_ORDER_DEFAULT =
        // 1 << 12 descriptors per station (main.c tx_ring_order) below a qdisc of tx_queue_len =
        // WIL_TX_Q_LEN_DEFAULT = 4000 (netdev.c wil_dev_setup; wil6210.h).
        tx_ring: WIL6210_4_10_TX_RING,
        tx_queue_len: WIL6210_4_10_TX_QUEUE_LEN,
        // The X10's own driver and qdisc, from its firmware's build tree (docs/facts.md
        // "Transmit ring": the prebuilt qca-backports wil6210.ko of the R9000 GPL tree, and its
        // Linux 3.10.20-al kernel): tx_ring_order defaults to 10, a ring of 1 << 10 = 1024
        // descriptors per station (wil_tx_init), with the same size/8 stop and size/4 wake
        // levels; the driver sets tx_queue_len 4000, but the kernel's attach_one_default_qdisc
        // attaches fq_codel to the interface, whose own limit is 1024 packets (fq_codel_init),
        // with CoDel's 5 ms target and 100 ms interval.
        ap_tx_ring: X10_WIL6210_TX_RING,
        ap_fq_codel_limit: X10_FQ_CODEL_LIMIT,
        about: "seed 003's laptop (wil6210, QCA6320; Linux 4.10's driver) <-> Netgear X10 (its own wil6210 build, fq_codel): wil6210-dock's radio with the X10's (generic) link budget",
        ..WIL6210_DOCK
    },
    Device {
        name: "generic-11ac",
        technology: Technology::Dot11ac,
        max_mcs: 9,
        max_mpdus: 64,
        max_ampdu_bytes: 0,
        amsdu_msdus: 1,
        max_amsdu_bytes: 0,
        host_pkt_ns: 0,
        client_tx_pkt_ns: 0,
        client_tx_queue_frames: 0,
        // A Linux client: mac80211 drivers that receive in NAPI pass their context to
        // ieee80211_rx_napi, which delivers through napi_gro_receive (net/mac80211/rx.c), and
        // GRO flushes when the poll completes: a reorder release merges within 64 KiB.
        client_gro_msdus: GRO_WHOLE_BATCH,
        rx_gain_db: 0.0,
        // 20 dBm + 2 x 3 dBi.
        eirp_gain_dbm: 26.0,
        retrain_ms: 0.0,
        mcs_set: &[],
        tx_ring: 0,
        tx_queue_len: 0,
        ap_tx_ring: 0,
        ap_fq_codel_limit: 0,
        about: "802.11ac VHT MCS 0-9 as the standard defines it, no host limit",
    },
    Device {
        name: "generic-11n",
        technology: Technology::Dot11n,
        max_mcs: 15,
        max_mpdus: 64,
        max_ampdu_bytes: 0,
        amsdu_msdus: 1,
        max_amsdu_bytes: 0,
        host_pkt_ns: 0,
        client_tx_pkt_ns: 0,
        client_tx_queue_frames: 0,
        // A Linux client: mac80211 drivers that receive in NAPI pass their context to
        // ieee80211_rx_napi, which delivers through napi_gro_receive (net/mac80211/rx.c), and
        // GRO flushes when the poll completes: a reorder release merges within 64 KiB.
        client_gro_msdus: GRO_WHOLE_BATCH,
        rx_gain_db: 0.0,
        eirp_gain_dbm: 26.0,
        retrain_ms: 0.0,
        mcs_set: &[],
        tx_ring: 0,
        tx_queue_len: 0,
        ap_tx_ring: 0,
        ap_fq_codel_limit: 0,
        about: "802.11n HT MCS 0-15 as the standard defines it, no host limit",
    },
    Device {
        // Seed 002's phone and AP over 60 GHz: ASUS ROG Phone II (Qualcomm 802.11ad, Snapdragon
        // 855+) <-> Netgear Nighthawk X10 (QCA9500 802.11ad), 1 m apart, array facing the AP.
        // One preset describes the link: the model gives both stations of a path the device's
        // limits; seed 002 attributes the ceiling to the phone (the AP side is a router feeding
        // a 10G LAN, not characterised further).
        name: "rog-phone-2-11ad",
        technology: Technology::Dot11ad,
        // Seed 002 section 2: "supports all the 802.11ad single-carrier (SC) MCSs (1-12)".
        max_mcs: 12,
        // The phone runs Qualcomm's wil6210 driver (the ROG Phone II kernel seed 002 ported,
        // drivers/net/wireless/ath/wil6210). Its 11ad chip is the Talyn generation, whose
        // firmware reports WMI_FW_CAPABILITY_BACK_WIN_SIZE_64: wil_set_capabilities (main.c)
        // then uses WIL_MAX_AGG_WSIZE_64 = 64 MPDUs and WIL_MAX_AMPDU_SIZE_128 = 128 KiB
        // (wil6210.h). The older 32 / 64 KiB limits (panasonic-wigig, wil6210-dock) would cap
        // the MAC near 1.35 Gbit/s at MTU 1500 in this model, below the 1.6 Gbit/s that seed 002
        // attributes to the host, not the radio. The chip generation is our inference (seed 002
        // names no chip): an uncertain fact.
        max_mpdus: 64,
        max_ampdu_bytes: 131_072,
        amsdu_msdus: 1,
        max_amsdu_bytes: 0,
        // Seed 002 section 2: "in practice, the maximum TCP throughput is limited to about
        // 1.6 Gbps" (refs [9, 10]) although SC MCS 12 is 4620 Mbit/s: the host caps it. At the
        // default MTU 1500 (MSS 1448), 1600 Mbit/s of goodput is 138.1 k segments/s plus one
        // delayed ACK per two segments, 69.1 k/s: 207.2 k packets/s through the host =
        // 1 / 207.2 k = 4.83 us per packet.
        host_pkt_ns: 4_830,
        // Seed 002 section 3.2 (docs/facts.md "Energy"): single-path 11ad TCP reaches 1450 Mbit/s
        // uplink against 1600 downlink. Both stations of a path share the preset, so with one
        // per-packet cost the two directions are symmetric (1600 each); the difference is the
        // phone's own cost of sending a segment (the AP, a router, is not characterised). Sending
        // at 1450 Mbit/s the phone handles 125.2 k segments/s (MSS 1448) plus 62.6 k ACKs/s:
        // 1448 x 8 / 1450 Mbit/s = 7.989 us per segment = 4.83 (send) + 4.83 / 2 (ACK) + x,
        // x = 0.744 us more per data packet the phone sends. Set once from that device fact.
        client_tx_pkt_ns: 744,
        client_tx_queue_frames: 0,
        // Seed 002 section 3.3 makes GRO part of the set-up on both interfaces, and wil6210 hands
        // every frame to napi_gro_receive; but the merge is not modelled for the phone: its host
        // costs (host_pkt_ns, client_tx_pkt_ns, energy.rs) are derived with one ACK per two
        // segments both ways, and re-deriving them with the merge needs the server's GRO on the
        // upload, which seed 002 does not give (docs/models.md, "What a receiver gets").
        client_gro_msdus: 0,
        // Not characterised by seed 002 (the phone is 1 m from the AP: any budget gives the top
        // MCS); the standard's minimum sensitivity and the generic budget.
        rx_gain_db: 0.0,
        eirp_gain_dbm: 40.0,
        // docs/facts.md: commodity re-establishment takes hundreds of ms to s; not measured by seed 002.
        retrain_ms: 500.0,
        mcs_set: &[],
        // The client's wil6210 driver generation (the phone's 11ad chip, Talyn, see max_mpdus):
        // TX ring 1 << 12, tx_queue_len 4000 (docs/facts.md "Transmit ring"). The AP is the
        // Netgear X10, whose own build and qdisc are a fact of that device, the same in every
        // preset it is in (travelmate-x10): 1024 descriptors below fq_codel (limit 1024).
        tx_ring: WIL6210_4_10_TX_RING,
        tx_queue_len: WIL6210_4_10_TX_QUEUE_LEN,
        ap_tx_ring: X10_WIL6210_TX_RING,
        ap_fq_codel_limit: X10_FQ_CODEL_LIMIT,
        about: "seed 002's ASUS ROG Phone II 802.11ad <-> Netgear X10: SC MCS 1-12, host-capped at ~1.6 Gbit/s TCP",
    },
    Device {
        // Seed 002's phone and AP over 5 GHz: ROG Phone II's Qualcomm 802.11ac <-> Netgear X10
        // (QCA9984, 4x4; the phone has 2 streams).
        name: "rog-phone-2-11ac",
        technology: Technology::Dot11ac,
        // Seed 002 section 2: "supports all the 802.11ac MCSs (0-9), channel widths of
        // 20/40/80 MHz, and 2 spatial streams (SS), yielding PHY data rates from 6.5 Mbps up to
        // 866 Mbps" (80 MHz, 2 SS, short GI: the path defaults bandwidth_mhz = 80, streams = 2).
        max_mcs: 9,
        // VHT Block Ack window (802.11-2016: 64 MPDUs), the standard's A-MPDU byte limit.
        max_mpdus: 64,
        max_ampdu_bytes: 0,
        // A-MSDU inside A-MPDU, as Qualcomm's 802.11ac firmware does by default: the X10's
        // QCA9984 runs the firmware family Linux drives with ath10k, whose host sets
        // max_num_amsdu = ATH10K_HTT_MAX_NUM_AMSDU_DEFAULT = 3 MSDUs per A-MSDU with
        // ATH10K_HTT_MAX_NUM_AMPDU_DEFAULT = 64 (drivers/net/wireless/ath/ath10k/htt.h: "default
        // in most firmware revisions ... a sweet spot performance wise"; core.c
        // ath10k_core_init_firmware_features). The phone's Snapdragon 855 WLAN runs qcacld-3.0,
        // whose gMaxAmsduNum defaults to 0 = "FW automode selection" (A-MSDU on, count chosen by
        // the firmware); we take the same Qualcomm firmware default of 3 for its uplink (an
        // inference: the phone's count is not published). Three 1500-byte MSDUs make a
        // 4,602-octet MPDU: above the smallest VHT maximum MPDU length (3895) and within 7991
        // (IEEE80211_MAX_MPDU_LEN_VHT_7991; 802.11-2016 9.4.2.158.2), which both Qualcomm
        // chips support; the MSDU count, not the length, binds.
        amsdu_msdus: 3,
        max_amsdu_bytes: 7_991,
        // Seed 002 section 3.3: "rates up to 600 Mbps over the 802.11ac interface alone can be
        // supported without GRO using SPTCP": the host does not cap 11ac at its 600 Mbit/s, the
        // MAC does (docs/facts.md: TCP goodput ~65-70 % of the 866.7 Mbit/s PHY rate). No host cost.
        host_pkt_ns: 0,
        client_tx_pkt_ns: 0,
        // The phone's qcacld-3.0 driver (Snapdragon 855's integrated WLAN: the SNOC bus, a
        // low-latency datapath) hands frames to the firmware against the target's transmit
        // credit, CFG_TGT_NUM_MSDU_DESC = 1024 + 32 = 1056 MSDU descriptors
        // (core/mac/inc/wlan_tgt_def_config.h, taken as target_tx_credit in
        // core/dp/txrx/ol_cfg.c), and stops the netdev queues when they run short (TX flow
        // control v2, which configs/default_defconfig selects for SNOC); during an off-channel
        // dwell the firmware pauses the vdev (WMI tx pause event, wma_data.c) and holds them.
        // The skb is freed at the firmware's TX completion (no free-at-download: that is the
        // SDIO/USB datapath's) and not orphaned (gEnableTxOrphan defaults to false), so TCP
        // Small Queues sees these frames as it sees the qdisc's. Only the phone's side: the
        // X10's QCA9984 runs another driver. Sources: docs/facts.md "802.11ac / 802.11n".
        client_tx_queue_frames: 1056,
        // Not merged, as for the phone's 11ad (above). When it is: qcacld-3.0 delivers one HTT
        // in-order indication per NAPI poll (ce_service_max_rx_ind_flush = 1) of at most
        // maxMSDUsPerRxInd MSDUs (8 in the Snapdragon 855 ini; docs/facts.md "Linux TCP", GRO).
        client_gro_msdus: 0,
        rx_gain_db: 0.0,
        // Not characterised by seed 002; the generic budget (20 dBm + 2 x 3 dBi).
        eirp_gain_dbm: 26.0,
        retrain_ms: 0.0,
        mcs_set: &[],
        tx_ring: 0,
        tx_queue_len: 0,
        ap_tx_ring: 0,
        ap_fq_codel_limit: 0,
        about: "seed 002's ASUS ROG Phone II 802.11ac <-> Netgear X10: VHT MCS 0-9, 80 MHz, 2 SS, no host limit",
    },
    Device {
        // A dual-band laptop beside the phone (seed 002 section 5: the GRO and soft-IRQ
        // optimisations "are not needed in more powerful laptops"): the phone's 11ad radio
        // (same chip generation, 64-MPDU / 128 KiB aggregation) without its host limits, and
        // no power figures (not metered).
        name: "laptop-11ad",
        technology: Technology::Dot11ad,
        max_mcs: 12,
        max_mpdus: 64,
        max_ampdu_bytes: 131_072,
        amsdu_msdus: 1,
        max_amsdu_bytes: 0,
        host_pkt_ns: 0,
        client_tx_pkt_ns: 0,
        client_tx_queue_frames: 0,
        // The wil6210 driver: napi_gro_receive for every frame, flushed when the poll completes.
        client_gro_msdus: GRO_WHOLE_BATCH,
        rx_gain_db: 0.0,
        eirp_gain_dbm: 40.0,
        retrain_ms: 500.0,
        mcs_set: &[],
        // The client's wil6210 driver generation (the phone's 11ad chip, Talyn, see max_mpdus):
        // TX ring 1 << 12, tx_queue_len 4000 (docs/facts.md "Transmit ring"). The AP is the
        // Netgear X10, whose own build and qdisc are a fact of that device, the same in every
        // preset it is in (travelmate-x10): 1024 descriptors below fq_codel (limit 1024).
        tx_ring: WIL6210_4_10_TX_RING,
        tx_queue_len: WIL6210_4_10_TX_QUEUE_LEN,
        ap_tx_ring: X10_WIL6210_TX_RING,
        ap_fq_codel_limit: X10_FQ_CODEL_LIMIT,
        about: "dual-band laptop 802.11ad <-> Netgear X10: the phone's radio without host limits, not metered",
    },
    Device {
        name: "laptop-11ac",
        technology: Technology::Dot11ac,
        max_mcs: 9,
        max_mpdus: 64,
        max_ampdu_bytes: 0,
        // The same X10 AP as rog-phone-2-11ac and its firmware's A-MSDU default (3 MSDUs, see
        // there); the laptop's own chip is not named, and commodity 11ac clients also send
        // A-MSDUs in A-MPDUs, so both directions use it.
        amsdu_msdus: 3,
        max_amsdu_bytes: 7_991,
        host_pkt_ns: 0,
        client_tx_pkt_ns: 0,
        client_tx_queue_frames: 0,
        // A Linux client: mac80211 drivers that receive in NAPI pass their context to
        // ieee80211_rx_napi, which delivers through napi_gro_receive (net/mac80211/rx.c), and
        // GRO flushes when the poll completes: a reorder release merges within 64 KiB.
        client_gro_msdus: GRO_WHOLE_BATCH,
        rx_gain_db: 0.0,
        eirp_gain_dbm: 26.0,
        retrain_ms: 0.0,
        mcs_set: &[],
        tx_ring: 0,
        tx_queue_len: 0,
        ap_tx_ring: 0,
        ap_fq_codel_limit: 0,
        about: "dual-band laptop 802.11ac (80 MHz, 2 SS) <-> Netgear X10: no host limit, not metered",
    },
];

pub fn find(name: &str) -> Option<&'static Device> {
    DEVICES.iter().find(|d| d.name == name)
}

pub fn default_for(t: Technology) -> &'static Device {
    let name = match t {
        Technology::Dot11ad | Technology::Wired => "generic-11ad",
        Technology::Dot11ac => "generic-11ac",
        Technology::Dot11n => "generic-11n",
    };
    find(name).expect("generic presets exist")
}

/// Fills what the interferers of radio path `p` leave out: an adjacent-channel interferer's
/// rejection is the path's PHY's (spectrum.rs, rounded to 0.1 dB as the normalized scenario
/// spells it), a same-channel one's 0 dB; the MCS is the top of the device's ladder, the MTU
/// the path's.
pub fn fill_interferer_defaults(p: &mut PathCfg) {
    let phy = radio_phy(p);
    let aci = adjacent_rejection_db(&phy);
    let top = p.device.as_deref().and_then(find).and_then(|d| mcs_ladder(p, d).last().copied());
    let mtu = p.mtu_bytes;
    for i in p.interferer.iter_mut() {
        let same = i.channel == ChannelRelation::Same;
        i.rejection_db.get_or_insert(if same { 0.0 } else { (aci * 10.0).round() / 10.0 });
        // A coupled path (`path`) sends what its own flows give it, with its own MCS and MTU.
        if i.path.is_some() {
            continue;
        }
        i.load.get_or_insert(1.0);
        if let (None, Some(m)) = (i.mcs, top) {
            i.mcs = Some(m);
        }
        i.mtu_bytes.get_or_insert(mtu);
    }
}

fn vht_bw(mhz: u32) -> Option<vht::Bandwidth> {
    Some(match mhz {
        20 => vht::Bandwidth::Mhz20,
        40 => vht::Bandwidth::Mhz40,
        80 => vht::Bandwidth::Mhz80,
        160 => vht::Bandwidth::Mhz160,
        _ => return None,
    })
}

fn ht_bw(mhz: u32) -> Option<ht::Bandwidth> {
    Some(match mhz {
        20 => ht::Bandwidth::Mhz20,
        40 => ht::Bandwidth::Mhz40,
        _ => return None,
    })
}

/// The PHY of a validated radio path.
pub fn radio_phy(p: &PathCfg) -> RadioPhy {
    match p.technology {
        Technology::Dot11ac => RadioPhy::Vht {
            bw: vht_bw(p.bandwidth_mhz.unwrap_or(80)).unwrap_or(vht::Bandwidth::Mhz80),
            nss: p.streams.unwrap_or(2),
            sgi: p.short_gi.unwrap_or(true),
        },
        Technology::Dot11n => RadioPhy::Ht {
            bw: ht_bw(p.bandwidth_mhz.unwrap_or(20)).unwrap_or(ht::Bandwidth::Mhz20),
            sgi: p.short_gi.unwrap_or(true),
            band: if p.band_ghz.unwrap_or(2.4) < 3.0 { ht::Band::Ghz2_4 } else { ht::Band::Ghz5 },
        },
        _ => RadioPhy::Dmg,
    }
}

/// The MAC of a validated radio path with its device's aggregation limit.
pub fn mac_timing(p: &PathCfg, dev: &Device) -> MacTiming {
    let mut m = match radio_phy(p) {
        RadioPhy::Dmg => MacTiming::dmg(),
        RadioPhy::Vht { .. } => MacTiming::vht(),
        RadioPhy::Ht { band, .. } => MacTiming::ht(band),
    };
    m.max_mpdus = dev.max_mpdus;
    if dev.max_ampdu_bytes > 0 {
        m.max_ampdu_bytes = m.max_ampdu_bytes.min(dev.max_ampdu_bytes);
    }
    m.amsdu_msdus = dev.amsdu_msdus.max(1);
    if dev.max_amsdu_bytes > 0 {
        m.max_amsdu_bytes = m.max_amsdu_bytes.min(dev.max_amsdu_bytes);
    }
    m
}

/// The device of a validated radio path.
pub fn device_of(p: &PathCfg) -> &'static Device {
    p.device.as_deref().and_then(find).unwrap_or_else(|| default_for(p.technology))
}

/// Highest MCS a path may use: the device's, for 802.11n limited by the stream count.
pub fn max_mcs(p: &PathCfg, dev: &Device) -> u8 {
    match p.technology {
        Technology::Dot11n => dev.max_mcs.min(8 * p.streams.unwrap_or(1) - 1),
        _ => dev.max_mcs,
    }
}

/// The MCS ladder of a path: the device's set, or every valid MCS up to its maximum.
pub fn mcs_ladder(p: &PathCfg, dev: &Device) -> Vec<u8> {
    let phy = radio_phy(p);
    let top = max_mcs(p, dev);
    phy.mcs_candidates(top).filter(|m| dev.mcs_set.is_empty() || dev.mcs_set.contains(m)).collect()
}

/// Receive-array gain an 802.11ad client lacks when it listens for beacons: in the beacon
/// transmission interval the AP sweeps its DMG Beacons (Control PHY, MCS 0) through its
/// sectors while the client receives quasi-omni (802.11ad-2012 9.35.2: the responder of an
/// initiator sector sweep is in a quasi-omni receive pattern), whereas data flows between two
/// trained beams. Only presets that characterise it get the association model
/// (`association`); the others keep their link whatever the signal.
const QUASI_OMNI_LOSS_DB: &[(&str, f64)] = &[
    // Not published for the wil6210 module; bounded by seed 001 section III: at 155 ft every
    // session kept its link (low, stable rates; it breaks only beyond). In the lobby's channel
    // (seed001.py ENVIRONMENT: exponent 1.24, fading sigma 2.9 dB every 10 ms) and with this
    // preset's EIRP the RSSI at 155 ft is -66.0 dBm; a session of 10 s (~100 beacons) keeps
    // its association when a beacon is missed at most ~25 % of the time (0.25^7 x 100 < 0.2 %),
    // i.e. with the floor 0.67 sigma = 2 dB below: -68 dBm = -78 (MCS 0) + 10 dB. 10 dB is also
    // the array gain of a 10-element array over one element. The floor then equals MCS 1's
    // sensitivity: the client keeps an association exactly as long as it could carry data.
    ("wil6210-dock", 10.0),
];

/// The beacon-kept association of a path whose device characterises it: beacons every
/// 102.4 ms heard while the data link's RSSI is at least MCS 0's sensitivity (less the
/// receiver's gain over it) plus the quasi-omni loss; re-joining takes the device's
/// re-training time.
pub fn association(p: &PathCfg, dev: &Device) -> Option<super::channel::Association> {
    if radio_phy(p) != RadioPhy::Dmg {
        return None;
    }
    let loss = QUASI_OMNI_LOSS_DB.iter().find(|(n, _)| *n == dev.name)?.1;
    let beacon_sens = RadioPhy::Dmg.sensitivity_dbm(0)?;
    Some(super::channel::Association::new(
        beacon_sens - dev.rx_gain_db + loss,
        crate::time::Time(dmg::BEACON_INTERVAL_NS),
        crate::time::Time::from_ms_f64(dev.retrain_ms),
    ))
}

/// Free-space path loss at 1 m for the path's carrier, dB: 20 log10(4 pi f / c).
pub fn fspl_1m_db(p: &PathCfg) -> f64 {
    let f_hz = match p.technology {
        // Channel 2, 60.48 GHz (seed 000 Table 1: the modules used channels 2 and 3).
        Technology::Dot11ad => 60.48e9,
        Technology::Dot11ac => 5.5e9,
        _ => {
            if p.band_ghz.unwrap_or(2.4) < 3.0 {
                2.437e9
            } else {
                5.5e9
            }
        }
    };
    20.0 * (4.0 * std::f64::consts::PI * f_hz / 299_792_458.0).log10()
}

fn kind_name(k: crate::scenario::EventKind) -> &'static str {
    use crate::scenario::EventKind as K;
    match k {
        K::Blockage => "blockage",
        K::AntennaTurn => "antenna_turn",
        K::Walk => "walk",
        K::Scan => "scan",
        K::Contention => "contention",
    }
}

/// Checks the radio fields of path `i` (defaults already filled in).
pub fn validate_radio(p: &PathCfg, i: usize) -> Result<(), ScenarioError> {
    let f = |k: &str| format!("path.{i}.{k}");
    let tech = match p.technology {
        Technology::Dot11ad => "11ad",
        Technology::Dot11ac => "11ac",
        Technology::Dot11n => "11n",
        Technology::Wired => "wired",
    };
    if p.rate_mbps.is_some() || p.uplink_rate_mbps.is_some() {
        let k = if p.rate_mbps.is_some() { "rate_mbps" } else { "uplink_rate_mbps" };
        return Err(err(f(k), format!("a {tech} path's rate follows from its MCS; remove {k} (or set mcs)")));
    }
    let name = p.device.as_deref().unwrap_or("");
    let Some(dev) = find(name) else {
        let names: Vec<&str> = DEVICES.iter().filter(|d| d.technology == p.technology).map(|d| d.name).collect();
        return Err(err(f("device"), format!("unknown {tech} device {name:?} (known: {})", names.join(", "))));
    };
    if dev.technology != p.technology {
        return Err(err(f("device"), format!("{name} is not a {tech} device")));
    }
    match p.technology {
        Technology::Dot11ad => {
            for (k, set) in [
                ("bandwidth_mhz", p.bandwidth_mhz.is_some()),
                ("streams", p.streams.is_some()),
                ("short_gi", p.short_gi.is_some()),
                ("band_ghz", p.band_ghz.is_some()),
            ] {
                if set {
                    return Err(err(f(k), "802.11ad has one 2.16 GHz channel format; only 11ac / 11n paths take this"));
                }
            }
            if p.mtu_bytes > dmg::MAX_MSDU_BYTES {
                return Err(err(
                    f("mtu_bytes"),
                    format!("802.11ad carries MSDUs up to {} bytes (got {})", dmg::MAX_MSDU_BYTES, p.mtu_bytes),
                ));
            }
        }
        Technology::Dot11ac | Technology::Dot11n => {
            let bw = p.bandwidth_mhz.unwrap_or(0);
            let ok = if p.technology == Technology::Dot11ac { vht_bw(bw).is_some() } else { ht_bw(bw).is_some() };
            if !ok {
                let allowed = if p.technology == Technology::Dot11ac { "20, 40, 80 or 160" } else { "20 or 40" };
                return Err(err(f("bandwidth_mhz"), format!("must be {allowed} for {tech} (got {bw})")));
            }
            let streams = p.streams.unwrap_or(0);
            let max_ss = if p.technology == Technology::Dot11ac { vht::MAX_SPATIAL_STREAMS } else { 2 };
            if streams == 0 || streams > max_ss {
                return Err(err(f("streams"), format!("must be between 1 and {max_ss} for {tech} (got {streams})")));
            }
            let band = p.band_ghz.unwrap_or(0.0);
            if !(band == 2.4 || band == 5.0) || (p.technology == Technology::Dot11ac && band != 5.0) {
                let allowed = if p.technology == Technology::Dot11ac { "5" } else { "2.4 or 5" };
                return Err(err(f("band_ghz"), format!("must be {allowed} for {tech} (got {band})")));
            }
            // 802.11 MSDU limit without A-MSDU (802.11-2016 9.2.4.7: 2304 octets).
            if p.mtu_bytes > 2304 {
                return Err(err(
                    f("mtu_bytes"),
                    format!("{tech} carries MSDUs up to 2304 bytes (got {})", p.mtu_bytes),
                ));
            }
        }
        Technology::Wired => {}
    }
    let phy = radio_phy(p);
    let top = max_mcs(p, dev);
    if let Some(m) = p.mcs {
        let ladder = mcs_ladder(p, dev);
        let allowed: Vec<String> = ladder.iter().map(|m| m.to_string()).collect();
        if m > top || !phy.is_valid(m) || phy.sensitivity_dbm(m).is_none() || !ladder.contains(&m) {
            return Err(err(
                f("mcs"),
                format!("{m} is not an MCS this {tech} path ({name}) uses (allowed: {})", allowed.join(", ")),
            ));
        }
    }
    if p.rate_adaptation == Some(RateAdaptation::Fixed) && p.mcs.is_none() {
        return Err(err(f("mcs"), "rate_adaptation = \"fixed\" needs an mcs"));
    }
    let given = [p.rssi_dbm.is_some(), p.signal.is_some(), p.distance_m.is_some()];
    if given.iter().filter(|g| **g).count() > 1 {
        return Err(err(f("signal"), "give one of rssi_dbm, signal or distance_m"));
    }
    if let Some(d) = p.distance_m {
        if !(d.is_finite() && d > 0.0 && d <= 10_000.0) {
            return Err(err(f("distance_m"), format!("must be > 0 and <= 10000 m (got {d})")));
        }
    }
    for (k, v, lo, hi) in [
        ("path_loss_exponent", p.path_loss_exponent, 1.0, 6.0),
        ("shadowing_db", p.shadowing_db, 0.0, 30.0),
        ("fading_db", p.fading_db, 0.0, 30.0),
        ("coherence_ms", p.coherence_ms, 0.1, 100_000.0),
    ] {
        if let Some(v) = v {
            if !(v.is_finite() && v >= lo && v <= hi) {
                return Err(err(f(k), format!("must be between {lo} and {hi} (got {v})")));
            }
        }
    }
    for (j, e) in p.event.iter().enumerate() {
        let g = |k: &str| format!("path.{i}.event.{j}.{k}");
        if !(e.t_s.is_finite() && e.t_s >= 0.0) {
            return Err(err(g("t_s"), format!("must be >= 0 (got {})", e.t_s)));
        }
        at_most_secs(&g("t_s"), e.t_s)?;
        if !(e.duration_s.is_finite() && e.duration_s > 0.0) {
            return Err(err(g("duration_s"), format!("must be > 0 (got {})", e.duration_s)));
        }
        at_most_secs(&g("duration_s"), e.duration_s)?;
        if let Some(l) = e.loss_db {
            if !(l.is_finite() && l > 0.0 && l <= 200.0) {
                return Err(err(g("loss_db"), format!("must be in (0, 200] dB; omit it for a total loss (got {l})")));
            }
            if e.kind == crate::scenario::EventKind::AntennaTurn {
                return Err(err(g("loss_db"), "an antenna turn loses the link; only a blockage takes loss_db"));
            }
        }
        use crate::scenario::EventKind as K;
        let need = |k: &str, v: Option<f64>, lo: f64, hi: f64| -> Result<(), ScenarioError> {
            match v {
                Some(x) if x.is_finite() && x >= lo && x <= hi => Ok(()),
                Some(x) => Err(err(g(k), format!("must be between {lo} and {hi} (got {x})"))),
                None => Err(err(g(k), format!("required for kind = \"{}\"", kind_name(e.kind)))),
            }
        };
        let forbid = |k: &str, set: bool| -> Result<(), ScenarioError> {
            if set {
                Err(err(g(k), format!("kind = \"{}\" does not take {k}", kind_name(e.kind))))
            } else {
                Ok(())
            }
        };
        match e.kind {
            K::Walk => {
                if p.distance_m.is_none() {
                    return Err(err(g("kind"), "a walk needs the path's distance_m (where it starts)"));
                }
                need("to_distance_m", e.to_distance_m, 0.01, 10_000.0)?;
            }
            K::Scan => {
                need("every_s", e.every_s, 0.001, crate::time::MAX_USER_SECS as f64)?;
                need("scan_ms", e.scan_ms, 0.01, 60_000.0)?;
                if e.scan_ms.unwrap_or(0.0) / 1e3 >= e.every_s.unwrap_or(0.0) {
                    return Err(err(g("scan_ms"), "a scan must be shorter than its period every_s"));
                }
                if e.dwell_ms.is_some() {
                    need("dwell_ms", e.dwell_ms, 0.01, 60_000.0)?;
                }
                if e.rest_ms.is_some() {
                    need("rest_ms", e.rest_ms, 0.0, 60_000.0)?;
                }
            }
            K::Contention => need("load_mbps", e.load_mbps, 0.0, 1e6)?,
            K::Blockage | K::AntennaTurn => {}
        }
        if e.kind != K::Walk {
            forbid("to_distance_m", e.to_distance_m.is_some())?;
        }
        if e.kind != K::Scan {
            forbid("every_s", e.every_s.is_some())?;
            forbid("scan_ms", e.scan_ms.is_some())?;
            forbid("dwell_ms", e.dwell_ms.is_some())?;
            forbid("rest_ms", e.rest_ms.is_some())?;
        }
        if e.kind != K::Contention {
            forbid("load_mbps", e.load_mbps.is_some())?;
        }
        if !matches!(e.kind, K::Blockage | K::AntennaTurn) {
            forbid("retrain_ms", e.retrain_ms.is_some())?;
        }
        if let Some(r) = e.retrain_ms {
            if !(r.is_finite() && (0.0..=60_000.0).contains(&r)) {
                return Err(err(g("retrain_ms"), format!("must be between 0 and 60000 (got {r})")));
            }
        }
    }
    for (j, x) in p.interferer.iter().enumerate() {
        let g = |k: &str| format!("path.{i}.interferer.{j}.{k}");
        let range = |k: &str, v: f64, lo: f64, hi: f64| -> Result<(), ScenarioError> {
            if v.is_finite() && v >= lo && v <= hi {
                Ok(())
            } else {
                Err(err(g(k), format!("must be between {lo} and {hi} (got {v})")))
            }
        };
        if x.path.is_some() {
            // Its own flows decide when it sends, its own path its MCS and MTU, for the run.
            for (k, set) in [
                ("load", x.load.is_some()),
                ("mcs", x.mcs.is_some()),
                ("mtu_bytes", x.mtu_bytes.is_some()),
                ("start_s", x.start_s != 0.0),
                ("stop_s", x.stop_s.is_some()),
            ] {
                if set {
                    return Err(err(
                        g(k),
                        "not with `path`: the linked path's own flows decide when it sends, and its own \
                         settings its MCS and MTU (allowed with `path`: channel, power_db, sensed, beams, rejection_db)",
                    ));
                }
            }
        }
        range("load", x.load.unwrap_or(1.0), 0.0, 1.0)?;
        range("start_s", x.start_s, 0.0, crate::time::MAX_USER_SECS as f64)?;
        if let Some(stop) = x.stop_s {
            if !(stop.is_finite() && stop > x.start_s) {
                return Err(err(g("stop_s"), format!("must be after start_s ({}) (got {stop})", x.start_s)));
            }
            at_most_secs(&g("stop_s"), stop)?;
        }
        range("power_db", x.power_db, -100.0, 100.0)?;
        range("sensed", x.sensed.unwrap_or(0.0), 0.0, 1.0)?;
        range("rejection_db", x.rejection_db.unwrap_or(0.0), 0.0, 100.0)?;
        // The interferer is a link of the same kind of device: its MCS comes from our ladder.
        if let Some(m) = x.mcs {
            let ladder = mcs_ladder(p, dev);
            if !ladder.contains(&m) {
                let allowed: Vec<String> = ladder.iter().map(|m| m.to_string()).collect();
                return Err(err(
                    g("mcs"),
                    format!("{m} is not an MCS this {tech} device ({name}) uses (allowed: {})", allowed.join(", ")),
                ));
            }
        }
        if let Some(mtu) = x.mtu_bytes {
            let max = if p.technology == Technology::Dot11ad { dmg::MAX_MSDU_BYTES } else { 2304 };
            if !(576..=max).contains(&mtu) {
                return Err(err(g("mtu_bytes"), format!("must be between 576 and {max} for {tech} (got {mtu})")));
            }
        }
    }
    if p.rate_adaptation == Some(RateAdaptation::Commodity) && p.mcs.is_some() {
        return Err(err(f("mcs"), "rate_adaptation = \"commodity\" chooses the MCS itself; remove mcs"));
    }
    if let Some(r) = p.rssi_dbm {
        if !(r.is_finite() && (-110.0..=0.0).contains(&r)) {
            return Err(err(f("rssi_dbm"), format!("must be between -110 and 0 dBm (got {r})")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_consistent() {
        for d in DEVICES {
            assert!(find(d.name).is_some());
            assert!(d.max_mpdus >= 1 && d.max_mpdus <= 64, "{}: Block Ack window is at most 64", d.name);
        }
        assert_eq!(default_for(Technology::Dot11ac).name, "generic-11ac");
        let ad = find("rog-phone-2-11ad").expect("seed 002 11ad preset");
        assert_eq!((ad.technology, ad.max_mcs, ad.max_mpdus, ad.host_pkt_ns), (Technology::Dot11ad, 12, 64, 4_830));
        // 1.5 x host_pkt_ns + client_tx_pkt_ns per segment sent = 1448 x 8 bits / 1450 Mbit/s.
        let per_seg = (3 * ad.host_pkt_ns / 2 + ad.client_tx_pkt_ns) as f64;
        assert!((1448.0 * 8.0 / per_seg * 1e3 - 1450.0).abs() < 1.0, "{per_seg}");
        let ac = find("rog-phone-2-11ac").expect("seed 002 11ac preset");
        assert_eq!((ac.technology, ac.max_mcs, ac.host_pkt_ns), (Technology::Dot11ac, 9, 0));
        assert_eq!(ac.amsdu_msdus, 3);
    }

    /// A-MSDU settings stay within the standard: at least one MSDU per MPDU, a length limit
    /// within the technology's maximum MPDU, and room for the device's MSDU count at MTU 1500.
    #[test]
    fn amsdu_presets_fit_the_standard() {
        use crate::link::radio::mpdu_len;
        for d in DEVICES {
            assert!(d.amsdu_msdus >= 1, "{}: at least one MSDU per MPDU", d.name);
            let std_max = match d.technology {
                Technology::Dot11ac => vht::MAX_MPDU_BYTES,
                Technology::Dot11n => crate::link::radio::HT_MAX_MPDU_IN_AMPDU_BYTES,
                _ => dmg::MAX_MSDU_BYTES + crate::link::radio::MPDU_OVERHEAD_BYTES,
            };
            assert!(d.max_amsdu_bytes <= std_max, "{}: {} > {std_max}", d.name, d.max_amsdu_bytes);
            if d.amsdu_msdus > 1 {
                let len = mpdu_len((0..d.amsdu_msdus).map(|_| 1500));
                assert!(len <= d.max_amsdu_bytes, "{}: {len} octets do not fit {}", d.name, d.max_amsdu_bytes);
            }
        }
        // The generic presets follow the standard's baseline: A-MSDU is optional.
        for t in [Technology::Dot11ad, Technology::Dot11ac, Technology::Dot11n] {
            assert_eq!(default_for(t).amsdu_msdus, 1);
        }
    }
}
