#!/usr/bin/env python3
"""Follows quoted's events gap-free: prints every event once, in seq order.

    QUOTED_ENDPOINT=tcp://127.0.0.1:5555 QUOTED_EVENTS=tcp://127.0.0.1:5556 \\
        python3 follow_events.py [--since SEQ] [--count N]

The live stream can skip (a slow subscriber past its high-water mark, a restart of quoted,
a subscription not yet in place): whenever an event's seq is beyond the next one expected,
the missing ones are fetched from quoted's log with the `events` request, then printed
before it. Events already printed are dropped. --since SEQ prints the history after SEQ first.
"""
import argparse
import json
import os
import sys

import zmq

from quoted_client import Client


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--since", type=int, default=None, help="print the events after this seq first")
    parser.add_argument("--count", type=int, default=None, help="stop after this many events")
    arguments = parser.parse_args()

    client = Client()
    subscriber = zmq.Context.instance().socket(zmq.SUB)
    subscriber.setsockopt(zmq.LINGER, 0)
    subscriber.setsockopt(zmq.SUBSCRIBE, b"")
    subscriber.connect(os.environ.get("QUOTED_EVENTS", "tcp://127.0.0.1:5556"))
    # Without --since, follow from now: the log's last seq is where printing starts.
    last = arguments.since if arguments.since is not None else client.call("ping")["lastSeq"]
    print(f"following after seq {last}", file=sys.stderr, flush=True)
    printed = 0

    def show(event):
        nonlocal last, printed
        print(f"{event['seq']} {event['type']} quote {event['quoteId']}", flush=True)
        last = event["seq"]
        printed += 1
        return arguments.count is not None and printed >= arguments.count

    while True:
        topic, body = subscriber.recv_multipart()
        event = json.loads(body)
        if event["seq"] <= last:
            continue  # already printed (replayed before it arrived live)
        while event["seq"] > last + 1:
            # A jump: fetch what was missed from the log, a page at a time.
            print(f"gap: seq {last + 1} to {event['seq'] - 1} missed live, replaying", file=sys.stderr, flush=True)
            page = client.call("events", since=last, limit=1000)["events"]
            if not page or page[0]["seq"] != last + 1:
                sys.exit(f"events after {last} are no longer in quoted's log (retention)")
            for missed in page:
                if missed["seq"] >= event["seq"]:
                    break
                if show(missed):
                    return
        if show(event):
            return


if __name__ == "__main__":
    main()
