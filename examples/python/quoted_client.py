"""A small client of quoted's command socket, for the examples (pyzmq only).

One DEALER, one request at a time, a timeout on every reply; a write sent with an
idempotency key can be retried safely (the daemon answers a repeat with the first quote).
"""
import json
import os
import uuid

import zmq


class QuotedError(Exception):
    """quoted refused the request: `code` and `message`, and `problems` for invalid input."""

    def __init__(self, error):
        super().__init__(f"{error['code']}: {error['message']}")
        self.code = error["code"]
        self.problems = error.get("problems", [])


class Client:
    def __init__(self, endpoint=None, timeout=5.0, context=None):
        self.endpoint = endpoint or os.environ.get("QUOTED_ENDPOINT", "tcp://127.0.0.1:5555")
        self.timeout_ms = int(timeout * 1000)
        self.context = context or zmq.Context.instance()
        self.socket = self._connect()

    def _connect(self):
        socket = self.context.socket(zmq.DEALER)
        socket.setsockopt(zmq.LINGER, 0)
        socket.connect(self.endpoint)
        return socket

    def call(self, op, retries=0, **fields):
        """Sends {"v":1,"op":op,...} and returns the reply; raises QuotedError on a refusal,
        TimeoutError when no reply came after `retries` more attempts."""
        request = {"v": 1, "op": op, "id": str(uuid.uuid4()), **fields}
        for _ in range(retries + 1):
            self.socket.send_multipart([b"", json.dumps(request).encode()])
            deadline_poller = zmq.Poller()
            deadline_poller.register(self.socket, zmq.POLLIN)
            while deadline_poller.poll(self.timeout_ms):
                reply = json.loads(self.socket.recv_multipart()[-1])
                if reply.get("id") not in (None, request["id"]):
                    continue  # a late reply to an earlier attempt
                if not reply["ok"]:
                    raise QuotedError(reply["error"])
                return reply
            # No reply: a new socket, so that a late reply cannot be mistaken for this one.
            self.socket.close()
            self.socket = self._connect()
        raise TimeoutError(f"no reply from quoted at {self.endpoint}")

    def submit(self, **submission):
        """Submits with an idempotency key, retried up to 3 times: never a duplicate quote."""
        submission.setdefault("idempotencyKey", str(uuid.uuid4()))
        return self.call("submit", retries=3, **submission)["quote"]
