import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
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

export const LOCK_FILE = 'safehold.lock';

/** Folders this process holds: a second open from the same process would corrupt them just the same. */
const held = new Set<string>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in a lock file; undefined when there is no file, 0 when its content is not a pid. */
function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : 0;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Creates the lock file with this process's pid, atomically and complete: the pid is written to a
 * private file first and hard-linked into place, so no other process can ever read a half-written lock.
 */
function create(file: string): boolean {
  const mine = `${file}.${process.pid}`;
  writeFileSync(mine, String(process.pid));
  try {
    linkSync(mine, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    rmSync(mine, { force: true });
  }
}

/**
 * Removes a lock left by a dead process. Renaming is atomic, so of two processes taking over at
 * once only one moves the stale file; if what was moved turns out to be a live lock that another
 * process has just taken, it is put back.
 */
function takeOver(file: string, stalePid: number): void {
  const aside = `${file}.stale.${process.pid}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    if (readPid(aside) !== stalePid) linkSync(aside, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(aside, { force: true });
  }
}

/** Takes the folder's lock or throws DataDirBusyError; returns the function that releases it. */
export function lockDataDir(dataDir: string): () => void {
  const folder = resolve(dataDir);
  if (held.has(folder)) throw new DataDirBusyError(dataDir, process.pid);
  mkdirSync(folder, { recursive: true });
  const file = join(folder, LOCK_FILE);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (create(file)) {
      held.add(folder);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        held.delete(folder);
        rmSync(file, { force: true });
      };
    }
    const holder = readPid(file);
    if (holder === undefined) continue; // released meanwhile: try again
    // Our own pid in the file but not held here: a previous run with the same pid (a container's
    // pid 1 after a restart) that died without releasing it.
    if (holder !== 0 && holder !== process.pid && alive(holder)) throw new DataDirBusyError(dataDir, holder);
    takeOver(file, holder);
  }
  throw new Error(`could not lock ${file}`);
}
