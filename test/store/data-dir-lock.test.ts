import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DataDirBusyError, LOCK_FILE, lockDataDir } from '../../src/store/data-dir-lock.ts';

/** A pid that belonged to a process that has exited (a child run to completion). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  assert.equal(child.status, 0);
  return child.pid as number;
}

describe('the PGlite data folder lock', () => {
  const folders: string[] = [];
  const folder = () => {
    const dir = mkdtempSync(join(tmpdir(), 'safehold-lock-'));
    folders.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of folders) rmSync(dir, { recursive: true, force: true });
  });

  it('writes this process id into the lock file and removes it on release', () => {
    const dir = folder();
    const release = lockDataDir(dir);
    assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), String(process.pid));
    release();
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
    lockDataDir(dir)();
  });

  it('refuses a folder another live process holds, naming that process', () => {
    const dir = folder();
    writeFileSync(join(dir, LOCK_FILE), String(process.ppid));
    assert.throws(
      () => lockDataDir(dir),
      (error: unknown) =>
        error instanceof DataDirBusyError &&
        error.message.includes(`in use by another Safehold process (pid ${process.ppid})`) &&
        error.message.includes('DATABASE_URL'),
    );
    assert.equal(
      readFileSync(join(dir, LOCK_FILE), 'utf8'),
      String(process.ppid),
      'the holder keeps its lock',
    );
  });

  it('refuses a second open of the same folder from the same process', () => {
    const dir = folder();
    const release = lockDataDir(dir);
    assert.throws(() => lockDataDir(join(dir, '.')), DataDirBusyError);
    release();
  });

  it('takes over a lock left by a process that died', () => {
    const dir = folder();
    writeFileSync(join(dir, LOCK_FILE), String(deadPid()));
    const release = lockDataDir(dir);
    assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), String(process.pid));
    release();
  });

  it('takes over a lock file that holds no pid, and one with its own pid from an earlier life', () => {
    const dir = folder();
    writeFileSync(join(dir, LOCK_FILE), '');
    lockDataDir(dir)();
    writeFileSync(join(dir, LOCK_FILE), String(process.pid));
    const release = lockDataDir(dir);
    assert.equal(readFileSync(join(dir, LOCK_FILE), 'utf8'), String(process.pid));
    release();
  });
});
