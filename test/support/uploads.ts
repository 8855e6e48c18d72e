/**
 * Uploads bytes to the targets POST /assets answered, the way any HTTP client would (single PUT or parts).
 */
export async function uploadComponents(
  uploads: Record<string, any>,
  files: Record<string, Buffer>,
): Promise<void> {
  for (const [name, bytes] of Object.entries(files)) {
    const target = uploads[name];
    if (!target) throw new Error(`no upload target for ${name}`);
    const puts = target.multipart
      ? target.parts.map((p: any) => ({
          ...p,
          body: bytes.subarray(
            (p.part_number - 1) * target.part_size,
            (p.part_number - 1) * target.part_size + p.size,
          ),
        }))
      : [{ ...target, body: bytes }];
    for (const put of puts) {
      const res = await fetch(put.url, { method: put.method, headers: put.headers, body: put.body });
      if (!res.ok) throw new Error(`PUT ${name}: ${res.status} ${await res.text()}`);
    }
  }
}
