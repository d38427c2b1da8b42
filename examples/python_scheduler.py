"""A custom MPTCP scheduler written in Python, run on the bundled dual-band blockage scenario.

    .venv/bin/python examples/python_scheduler.py

The scheduler sees, for every decision, one dict per subflow (cwnd, in_flight, srtt_ms, pf,
backup, has_cwnd_room, path name ...) and the connection (unassigned bytes, window room ...),
and returns the index of the subflow that gets the next segment, or None to wait. This one is
"prefer 11ad, spill to 11ac only while 11ad's window is full and the link is up": a simple
rule the built-in minRTT does not follow (minRTT compares RTTs).
"""

import mmpath


class PreferFast:
    name = "prefer-11ad"

    def __init__(self) -> None:
        self.rtos = 0

    def select(self, now_s, subflows, conn):
        usable = [s for s in subflows if s["established"] and not s["pf"] and s["has_cwnd_room"]]
        for s in usable:
            if s["path"] == "11ad" and s["link_up"]:
                return s["id"]
        return usable[0]["id"] if usable else None

    def on_rto(self, now_s, subflow):  # optional hooks: on_ack, on_rto, on_link_event
        self.rtos += 1


if __name__ == "__main__":
    sched = PreferFast()
    custom = mmpath.run("blockage", scheduler=sched)
    builtin = mmpath.run("blockage")
    for label, res in (("prefer-11ad (Python)", custom), ("minRTT (built in)", builtin)):
        f = res.summary["flows"][0]
        per_path = ", ".join(f"{s['path']} {s['goodput_mbps']:.0f}" for s in f["subflows"])
        print(f"{label:22s} {f['goodput_mbps']:7.1f} Mbit/s ({per_path}); scheduler {f['scheduler']}")
    print(f"RTOs seen by the Python scheduler: {sched.rtos}")
