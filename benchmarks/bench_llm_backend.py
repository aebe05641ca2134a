"""openai/<model> backend throughput against a loopback server that answers after a fixed latency.

    .venv/bin/python benchmarks/bench_llm_backend.py --n 2000 --latency 0.1 --concurrency 32

Sends N distinct chat-completions requests at concurrency C through the real openai SDK, with every
call logged to a run store, and prints the achieved throughput against the bound C/L. Then it runs
the same N requests again, which the store answers without a call, and prints that time as a share
of the first, and last the same N through the bare SDK (no store, no retry logic) for reference,
since the bound is reached only when the client has CPU to spare. The server (asyncio, HTTP/1.1
keep-alive) runs in its own process so it does not compete with the client for the GIL.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import socket
import tempfile
import time

from _ratios import ratio

from halluscope.backends.llm import LLMConfig, complete_all, create_backend
from halluscope.core.store import Store


def serve(port: int, latency: float, ready) -> None:
    body_of = lambda model: json.dumps({  # noqa: E731
        "id": "bench", "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 9, "completion_tokens": 1, "total_tokens": 10}}).encode()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                req = json.loads(await reader.readexactly(length))
                await asyncio.sleep(latency)
                out = body_of(req["model"])
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                             % len(out) + out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=1024)
        ready.set()
        async with server:
            await server.serve_forever()

    asyncio.run(main())


async def _bare_sdk(url: str, n: int, concurrency: int) -> float:
    """The same requests through the bare SDK (raw responses, no store, no retries): the client's own cost."""
    import openai

    from halluscope.backends.llm._openai import _raw_response_type

    client = openai.AsyncOpenAI(api_key="bench", base_url=url, max_retries=0)
    sem = asyncio.Semaphore(concurrency)
    raw = _raw_response_type()

    async def one(i: int) -> None:
        async with sem:
            r = await client.post("/chat/completions", cast_to=raw, options={"timeout": 30},
                                  body={"model": "bench", "messages": [{"role": "user", "content": f"bare {i}"}]})
            json.loads(r.text)

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - t0
    await client.close()
    return elapsed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="requests")
    ap.add_argument("--latency", type=float, default=0.1, help="server latency per request, seconds")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--smoke", action="store_true", help="40 requests (the test suite's run)")
    args = ap.parse_args()
    if args.smoke:
        args.n = 40

    port = free_port()
    ready = mp.Event()
    server = mp.Process(target=serve, args=(port, args.latency, ready), daemon=True)
    server.start()
    ready.wait(10)
    try:
        backend = create_backend("openai/bench", config=LLMConfig(), base_url=f"http://127.0.0.1:{port}/v1",
                                 concurrency=args.concurrency, timeout_s=30)
        requests = [backend.request([{"role": "user", "content": f"request {i}"}]) for i in range(args.n)]
        complete_all(backend, [backend.request([{"role": "user", "content": "warm-up"}])])  # SDK import, first connect
        with tempfile.TemporaryDirectory() as run_dir, Store(run_dir) as store:
            t0 = time.perf_counter()
            out, stats = complete_all(backend, requests, store=store)
            first = time.perf_counter() - t0
            assert all(r.status == "ok" for r in out) and stats.calls == args.n, stats.line()
            t0 = time.perf_counter()
            again, stats2 = complete_all(backend, requests, store=store)
            rerun = time.perf_counter() - t0
            assert stats2.calls == 0 and stats2.from_store == args.n, stats2.line()
        bare = asyncio.run(_bare_sdk(f"http://127.0.0.1:{port}/v1", args.n, args.concurrency))
    finally:
        server.terminate()
    bound = args.concurrency / args.latency
    print(f"N={args.n} L={args.latency * 1000:.0f} ms C={args.concurrency}: bound C/L = {bound:.1f} req/s")
    print(f"first run : {first:.2f} s, {args.n / first:.1f} req/s = {args.n / first / bound:.3f} of the bound "
          f"({stats.calls} calls, all logged to the store)")
    print(f"rerun     : {rerun:.3f} s from the store, {rerun / first:.1%} of the first run, {stats2.calls} calls")
    print(f"bare SDK  : {bare:.2f} s, {args.n / bare:.1f} req/s = {args.n / bare / bound:.3f} of the bound "
          f"(same server, no store, no retry logic)")
    ratio("halluscope / bare SDK throughput", bare / first, ">= 0.9", smoke=args.smoke)
    ratio("halluscope throughput / bound C/L", args.n / first / bound, smoke=args.smoke, unit="")


if __name__ == "__main__":
    main()
