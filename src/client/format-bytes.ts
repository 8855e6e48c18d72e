// One byte formatter for every reader of sizes: the CLI's tables and progress lines and the web UI.

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/**
 * A byte count in binary units with one decimal once past bytes: `512` → `"512 B"`, `1536` → `"1.5 KiB"`.
 * Past TiB the count stays in TiB.
 */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}
