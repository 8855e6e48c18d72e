import { createServer, type Server } from 'node:net';

const host = '127.0.0.1';

function listenOnAnyPort(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, host, () => resolve(server));
  });
}

function close(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** One TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/** Several distinct free ports: all are held open together so the kernel cannot hand out one twice. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listenOnAnyPort());
    return servers.map((server) => {
      const address = server.address();
      if (address === null || typeof address === 'string') throw new Error('expected a TCP address');
      return address.port;
    });
  } finally {
    await Promise.all(servers.map(close));
  }
}
