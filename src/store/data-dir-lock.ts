import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * PGlite's data folder can be opened by one process only; a second opener would corrupt it.
 * Every process that opens the folder (server or CLI) takes this lock first.
 */
export class DataDirBusyError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `The data folder ${resolve(dataDir)} is in use by another Safehold process (pid ${pid}), ` +
        'probably the running server. Stop it first (Ctrl-C), or run the service and this command ' +
        'against PostgreSQL with DATABASE_URL, which allows many processes.',
    );
    this.name = 'DataDirBusyError';
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function lockDataDir(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'safehold.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        rmSync(file, { force: true });
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = Number.parseInt(readFileSync(file, 'utf8'), 10);
      if (Number.isInteger(holder) && holder !== process.pid && alive(holder))
        throw new DataDirBusyError(dataDir, holder);
      rmSync(file, { force: true }); // left by a process that died: take it over
    }
  }
  throw new Error(`could not lock ${file}`);
}
