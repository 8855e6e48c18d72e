/**
 * `assay admin bootstrap-key`: on the service's host (or in its container), prints the first admin's key from
 * the data directory and deletes the file, so the key then exists only with whoever took it.
 */
export async function bootstrapKey(values: { keep?: boolean }): Promise<number> {
  const { ConfigError, loadConfig } = await import('../server/config.ts');
  const { takeBootstrapKeyFile } = await import('../server/admin/bootstrap-key-file.ts');
  let dataDir: string;
  try {
    dataDir = loadConfig().dataDir;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`assay admin bootstrap-key: ${error.message}\n`);
    return 2;
  }
  const { file, key } = await takeBootstrapKeyFile(dataDir, { keep: values.keep });
  if (!key) {
    process.stderr.write(
      `assay admin bootstrap-key: no key at ${file}: it was already taken, or this data directory (ASSAY_DATA_DIR) never bootstrapped an admin\n`,
    );
    return 1;
  }
  process.stdout.write(`${key}\n`);
  return 0;
}
