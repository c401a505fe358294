// A job's bytes kept in memory between the steps of one process, within a budget: the files of an upload (written to
// disk once as they arrive, and signed from memory rather than read back) and the result package (written once,
// and served from memory rather than read back for each download). Disk stays what survives a crash: whatever is
// not here (after a restart, past the budget, on another node) is read from the job's folder as before.

/** Bytes of uploads and result packages a process keeps in memory by default. */
export const DEFAULT_JOB_MEMORY_BYTES = 256 * 1024 * 1024;

/** What a job's memory was used for, since the start (for tests and the benchmark). */
export interface JobMemoryCounts {
  /** Uploaded files signed (or packed) from memory. */
  uploadsFromMemory: number;
  /** Uploaded files read back from disk (not in memory). */
  uploadsReadBack: number;
  /** Downloads served from memory. */
  packagesFromMemory: number;
  /** Downloads read from the store. */
  packagesReadBack: number;
}

interface Kept {
  bytes: number;
  readonly uploads?: Map<string, Uint8Array>;
  readonly pkg?: { readonly name: string; readonly chunks: readonly Uint8Array[] };
}

/** The memory of one process's jobs (see the top of this file); least recently kept goes first when room is needed. */
export class JobMemory {
  private used = 0;
  /** By organization/id/kind, least recently kept first. */
  private readonly kept = new Map<string, Kept>();
  readonly counts: JobMemoryCounts = { uploadsFromMemory: 0, uploadsReadBack: 0, packagesFromMemory: 0, packagesReadBack: 0 };

  constructor(readonly budget: number = DEFAULT_JOB_MEMORY_BYTES) {}

  /**
   * Takes `bytes` of the budget for an upload as it arrives (making room by letting go of what was kept longest);
   * false when there is no room: the caller writes the rest to disk only.
   */
  reserve(bytes: number): boolean {
    while (this.used + bytes > this.budget && this.kept.size) this.drop(this.kept.keys().next().value!);
    if (this.used + bytes > this.budget) return false;
    this.used += bytes;
    return true;
  }

  /** Gives back what reserve() took (an upload refused, or not kept). */
  release(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  /** Keeps an accepted job's uploaded files (their bytes reserved while they arrived) for its signing. */
  keepUploads(organization: string, id: string, files: Map<string, Uint8Array>, bytes: number): void {
    this.put(`${organization}/${id}/uploads`, { bytes, uploads: files });
  }

  /** The job's uploaded file, handed over once (its memory may move to a signing thread); undefined when not kept. */
  takeUpload(organization: string, id: string, fileName: string): Uint8Array | undefined {
    const key = `${organization}/${id}/uploads`;
    const kept = this.kept.get(key);
    const bytes = kept?.uploads?.get(fileName);
    if (!bytes) {
      this.counts.uploadsReadBack += 1;
      return undefined;
    }
    kept!.uploads!.delete(fileName);
    kept!.bytes -= bytes.length; // its memory is the signer's now, and freed with the job's
    this.release(bytes.length);
    if (!kept!.uploads!.size) this.drop(key);
    this.counts.uploadsFromMemory += 1;
    return bytes;
  }

  /** Keeps a finished job's result package (named `name` in its folder) as the chunks it was written from. */
  keepPackage(organization: string, id: string, name: string, chunks: readonly Uint8Array[]): void {
    const bytes = chunks.reduce((n, c) => n + c.length, 0);
    if (bytes > this.budget / 4) return; // one package never pushes out everything else
    this.drop(`${organization}/${id}/package`);
    if (!this.reserve(bytes)) return;
    this.put(`${organization}/${id}/package`, { bytes, pkg: { name, chunks } });
  }

  /** The chunks of the job's result package named `name`, or undefined when it is not in memory. */
  package(organization: string, id: string, name: string): { chunks: readonly Uint8Array[]; bytes: number } | undefined {
    const kept = this.kept.get(`${organization}/${id}/package`);
    if (!kept?.pkg || kept.pkg.name !== name) {
      this.counts.packagesReadBack += 1;
      return undefined;
    }
    this.counts.packagesFromMemory += 1;
    return { chunks: kept.pkg.chunks, bytes: kept.bytes };
  }

  /** Lets go of the job's uploaded files not taken (the job is finished, or processed without them). */
  forgetUploads(organization: string, id: string): void {
    this.drop(`${organization}/${id}/uploads`);
  }

  /** Lets go of everything kept for the job (deleted). */
  forget(organization: string, id: string): void {
    this.forgetUploads(organization, id);
    this.drop(`${organization}/${id}/package`);
  }

  /** Bytes kept or reserved now. */
  get usedBytes(): number {
    return this.used;
  }

  /** Adds an entry whose bytes are already counted in `used` (reserved). */
  private put(key: string, kept: Kept): void {
    this.drop(key);
    this.kept.set(key, kept);
  }

  private drop(key: string): void {
    const kept = this.kept.get(key);
    if (!kept) return;
    this.kept.delete(key);
    this.release(kept.bytes);
  }
}
