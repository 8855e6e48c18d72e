export interface CreateUserOptions {
  email: string;
  name?: string;
  admin?: boolean;
  serverUrl?: string;
  json?: boolean;
}

/**
 * `assay admin create-user`: asks the running service (with an admin key) to create a user and their
 * first key.
 */
export async function createUser(opts: CreateUserOptions): Promise<number> {
  const apiKey = process.env.SERVICE_API_KEY;
  if (!apiKey) {
    process.stderr.write(
      'assay admin create-user: set SERVICE_API_KEY to an admin key (the bootstrap admin key, for instance)\n',
    );
    return 2;
  }
  const serverUrl = (opts.serverUrl ?? process.env.SERVICE_SERVER_URL ?? 'http://127.0.0.1:8080').replace(
    /\/+$/,
    '',
  );
  const response = await fetch(`${serverUrl}/admin/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ email: opts.email, name: opts.name, admin: opts.admin ?? false }),
    signal: AbortSignal.timeout(30_000),
  });
  const body = (await response.json().catch(() => ({}))) as {
    user?: { id: string; email: string };
    api_key?: { key: string };
    error?: { message: string };
  };
  if (!response.ok) {
    process.stderr.write(
      `assay admin create-user: ${response.status} ${body.error?.message ?? response.statusText}\n`,
    );
    return 1;
  }
  if (opts.json) process.stdout.write(`${JSON.stringify(body)}\n`);
  else process.stdout.write(`user ${body.user!.email} (${body.user!.id})\napi key: ${body.api_key!.key}\n`);
  return 0;
}
