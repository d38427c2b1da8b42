"""The wireless paths' link quality from nl80211 (what `iw dev IF station dump` shows): the signal
and the MCS of the station a client interface is associated with, read with pyroute2's nl80211
classes, for the policies' `link_quality` events.
"""

from __future__ import annotations

from pyroute2 import IW
from pyroute2.netlink.exceptions import NetlinkError

from .events import Path

# The MCS attributes of struct rate_info in nl80211 (include/uapi/linux/nl80211.h, enum
# nl80211_rate_info), newest PHY first: a station reports the one of its PHY.
MCS_ATTRS = ("NL80211_RATE_INFO_EHT_MCS", "NL80211_RATE_INFO_HE_MCS", "NL80211_RATE_INFO_VHT_MCS",
             "NL80211_RATE_INFO_MCS")


def station_quality(msg) -> tuple[float | None, int | None]:
    """(signal dBm, MCS) of one NL80211_CMD_NEW_STATION message (pyroute2 nl80211cmd). The
    averaged signal (NL80211_STA_INFO_SIGNAL_AVG, the driver's EWMA) when the driver gives it, else
    the last frame's; the MCS of the transmit rate (our sending direction). None: not reported."""
    info = msg.get_attr("NL80211_ATTR_STA_INFO")
    if info is None:
        return None, None
    signal = info.get_attr("NL80211_STA_INFO_SIGNAL_AVG")
    if signal is None:
        signal = info.get_attr("NL80211_STA_INFO_SIGNAL")
    mcs = None
    rate = info.get_attr("NL80211_STA_INFO_TX_BITRATE")
    if rate is not None:
        mcs = next((rate.get_attr(a) for a in MCS_ATTRS if rate.get_attr(a) is not None), None)
    return (None if signal is None else float(signal)), mcs


class Stations:
    """The paths whose interfaces are wireless (nl80211 knows them), polled on demand."""

    def __init__(self, paths: list[Path]) -> None:
        self.iw: IW | None = None
        self.paths: list[Path] = []
        try:
            self.iw = IW()
        except (NetlinkError, OSError):
            return  # no nl80211 in this kernel: no wireless paths
        for p in paths:
            try:
                self.iw.get_interface_by_ifindex(p.ifindex)
            except NetlinkError:
                continue  # not a wireless interface
            self.paths.append(p)
        if not self.paths:
            self.close()

    def poll(self) -> list[tuple[int, float | None, int | None]]:
        """(ifindex, signal dBm, MCS) of each wireless path with a station (associated)."""
        out = []
        for p in self.paths:
            try:
                msgs = list(self.iw.get_stations(p.ifindex)) if self.iw else []
            except NetlinkError:
                continue
            if msgs:
                out.append((p.ifindex, *station_quality(msgs[0])))
        return out

    def close(self) -> None:
        if self.iw is not None:
            self.iw.close()
            self.iw = None
