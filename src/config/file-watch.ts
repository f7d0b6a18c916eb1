import { type Stats, statSync } from 'node:fs';
import { stat } from 'node:fs/promises';

/**
 * Calls `changed` with the files whose content may have changed, however they changed: written in
 * place, replaced by a rename, or behind a symlink swapped (a Kubernetes volume's `..data`), which
 * `stat` follows. Each file's identity, size and times are read every `everyMs`; a change is told
 * once the file has held still for one more look (a file being written is not read half-way).
 * Polling rather than `fs.watch`: a watch on a symlinked file follows the inode it first resolved,
 * and misses every swap after the first.
 */
export function watchFiles(
  paths: readonly string[],
  changed: (paths: string[]) => void,
  everyMs = 500,
): { stop(): void } {
  const seen = new Map<string, string>();
  /** Files seen changing, told once they hold still. */
  const settling = new Map<string, string>();
  // Taken now, not a turn later: a change made once the caller goes on is a change.
  for (const path of paths) seen.set(path, signatureNow(path));
  let looking = false;
  const look = async () => {
    if (looking) return;
    looking = true;
    try {
      const still: string[] = [];
      for (const path of paths) {
        const now = await signatureOf(path);
        if (settling.has(path)) {
          if (settling.get(path) === now) {
            settling.delete(path);
            seen.set(path, now);
            still.push(path);
          } else settling.set(path, now);
        } else if (now !== seen.get(path)) settling.set(path, now);
      }
      if (still.length > 0) changed(still);
    } finally {
      looking = false;
    }
  };
  const timer = setInterval(() => void look(), everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

const signatureText = ({ dev, ino, size, mtimeMs, ctimeMs }: Stats) => `${dev}:${ino}:${size}:${mtimeMs}:${ctimeMs}`;
const unreadable = (error: unknown) => `unreadable:${(error as NodeJS.ErrnoException).code ?? 'unknown'}`;

function signatureNow(path: string): string {
  try {
    return signatureText(statSync(path));
  } catch (error) {
    return unreadable(error);
  }
}

async function signatureOf(path: string): Promise<string> {
  try {
    return signatureText(await stat(path));
  } catch (error) {
    return unreadable(error);
  }
}
