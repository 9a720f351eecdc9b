"""A loopback TCP request/response pair, for `wakesim record` (docs/record.md): an asyncio echo
server and, in a forked child, an asyncio client that sends N requests of SIZE bytes, each after
the previous answer.

    python3 examples/record/echo.py [N=2000] [SIZE=64]
"""
import asyncio
import os
import socket
import sys

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
SIZE = int(sys.argv[2]) if len(sys.argv) > 2 else 64

# Listen before forking, so the client can connect at once.
lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
lsock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
lsock.bind(("127.0.0.1", 0))
lsock.listen()
port = lsock.getsockname()[1]


async def client():
    r, w = await asyncio.open_connection("127.0.0.1", port)
    msg = b"x" * SIZE
    for _ in range(N):
        w.write(msg)
        await w.drain()
        await r.readexactly(SIZE)
    w.close()
    await w.wait_closed()


async def server():
    done = asyncio.Event()

    async def handle(r, w):
        while data := await r.read(SIZE):
            w.write(data)
            await w.drain()
        w.close()
        done.set()

    srv = await asyncio.start_server(handle, sock=lsock)
    await done.wait()
    srv.close()


pid = os.fork()
if pid == 0:
    lsock.close()
    asyncio.run(client())
    os._exit(0)
asyncio.run(server())
os.waitpid(pid, 0)
print(f"{N} requests of {SIZE} bytes echoed")
