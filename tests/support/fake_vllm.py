"""Stands in for the 'vllm' executable: 'serve MODEL --host H --port P --served-model-name NAME' answers
/v1/models and /v1/chat/completions like a vLLM server would, and records the requests in $FAKE_VLLM_LOG."""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

args = sys.argv[1:]
assert args[0] == "serve", args
port = int(args[args.index("--port") + 1])
name = args[args.index("--served-model-name") + 1]


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def _send(self, obj):
        data = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        self._send({"object": "list", "data": [{"id": name, "object": "model", "root": args[1]}]})

    def do_POST(self):
        req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with open(os.environ["FAKE_VLLM_LOG"], "a") as fh:
            fh.write(json.dumps(req) + "\n")
        self._send(
            {
                "id": "x",
                "object": "chat.completion",
                "created": 0,
                "model": req["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": "served"}, "finish_reason": "stop"}
                ],
                "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4},
            }
        )


ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()
