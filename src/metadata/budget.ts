// Reader budgets: named limits on the work one module may cost, and the counters they are checked against.
// Legal files can still be hostile (names sharing one long tail, thousands of attributes sharing one blob,
// long Ptr tables): every decode and every full-table scan is charged here, so time and memory stay bounded.
import { FormatError, hex } from '../core/errors.js';

const MiB = 1024 * 1024;

export interface ReaderBudgets {
  /** Longest name read from #Strings, in UTF-8 bytes without the NUL. */
  readonly maxNameBytes: number;
  /** Bytes decoded into strings per module: #Strings names and attribute strings, each distinct offset once. */
  readonly maxStringBytes: number;
  /** Attribute value blob bytes decoded per module, counted again on every decode of the same blob. */
  readonly maxAttributeValueBytes: number;
  /** Custom attributes described per module (assembly and module targets together). */
  readonly maxDescribedAttributes: number;
  /** Table rows visited by full-table scans per module (building maps, finding attributes). */
  readonly maxRowsScanned: number;
}

/**
 * Far above real assemblies: in Mono's 4.5 corpus the longest #Strings entry is 419 bytes, the most
 * assembly and module attributes in one file is 105 and their value blobs total 13 KiB.
 */
export const DEFAULT_READER_BUDGETS: ReaderBudgets = {
  // The CLR refuses type names over MAX_CLASS_NAME (1,024 characters); no identifier needs more bytes than that in practice.
  maxNameBytes: 1024,
  maxStringBytes: 32 * MiB,
  maxAttributeValueBytes: 16 * MiB,
  maxDescribedAttributes: 65_536,
  // A few passes over tables of up to 2^24 rows each.
  maxRowsScanned: 64 * MiB,
};

/** Work done so far for one module; tests read it to show that hostile input costs bounded work. */
export interface ReaderWork {
  /** Bytes decoded into strings (#Strings names and attribute strings; cache hits cost nothing). */
  stringBytes: number;
  /** Attribute value blob bytes decoded. */
  attributeValueBytes: number;
  /** Custom attributes described. */
  describedAttributes: number;
  /** Table rows visited by full-table scans. */
  rowsScanned: number;
}

/** Charges work against the budgets and throws SG_ERR_MD_BUDGET before a budget would be exceeded. */
export class ReaderMeter {
  readonly budgets: ReaderBudgets;
  readonly work: ReaderWork = { stringBytes: 0, attributeValueBytes: 0, describedAttributes: 0, rowsScanned: 0 };

  constructor(budgets: Partial<ReaderBudgets> = {}) {
    this.budgets = { ...DEFAULT_READER_BUDGETS, ...budgets };
  }

  /**
   * @param what the structure being read, for the message
   * @throws FormatError SG_ERR_MD_BUDGET
   */
  stringBytes(n: number, fileOffset: number, what: string): void {
    // Each counter is named in its own method (not through a computed key): these run once per string or row.
    const after = this.work.stringBytes + n;
    if (after > this.budgets.maxStringBytes) throw overBudget(after, this.budgets.maxStringBytes, 'maxStringBytes', 'bytes of strings', fileOffset, what);
    this.work.stringBytes = after;
  }

  /** @throws FormatError SG_ERR_MD_BUDGET */
  attributeValueBytes(n: number, fileOffset: number): void {
    const after = this.work.attributeValueBytes + n;
    const limit = this.budgets.maxAttributeValueBytes;
    if (after > limit) throw overBudget(after, limit, 'maxAttributeValueBytes', 'bytes of attribute values', fileOffset, 'custom attribute value');
    this.work.attributeValueBytes = after;
  }

  /** @throws FormatError SG_ERR_MD_BUDGET */
  describedAttributes(n: number, fileOffset: number): void {
    const after = this.work.describedAttributes + n;
    const limit = this.budgets.maxDescribedAttributes;
    if (after > limit) throw overBudget(after, limit, 'maxDescribedAttributes', 'custom attributes', fileOffset, 'CustomAttribute table');
    this.work.describedAttributes = after;
  }

  /** @throws FormatError SG_ERR_MD_BUDGET */
  rowsScanned(n: number, fileOffset: number, table: string): void {
    const after = this.work.rowsScanned + n;
    if (after > this.budgets.maxRowsScanned)
      throw overBudget(after, this.budgets.maxRowsScanned, 'maxRowsScanned', 'table rows scanned', fileOffset, `${table} table`);
    this.work.rowsScanned = after;
  }
}

function overBudget(after: number, limit: number, budget: keyof ReaderBudgets, unit: string, fileOffset: number, what: string): FormatError {
  return new FormatError(
    'SG_ERR_MD_BUDGET',
    `reading the ${what} at ${hex(Math.max(0, fileOffset))} would bring this module to ${after} ${unit}, over the reader budget of ${limit} (${budget})`,
    { structure: what, fileOffset, needed: after, available: limit },
  );
}

/** A name longer than maxNameBytes. */
export function nameTooLong(fileOffset: number, limit: number): FormatError {
  return new FormatError('SG_ERR_MD_BUDGET', `#Strings name at ${hex(fileOffset)} is longer than ${limit} bytes (maxNameBytes)`, {
    structure: '#Strings heap',
    fileOffset,
    needed: limit + 1,
    available: limit,
  });
}
