// The options of `signgate sign`, apart from the command so that the archive path (archive.ts), which sign.ts
// loads on demand, can name them without importing the command back.
import type { CheckArgs } from './check-command.js';

export interface SignArgs extends CheckArgs {
  files?: string[];
  assemblies?: string[];
  destinationPath?: string;
  rootDirectory?: string;
  deleteAfterwards: boolean;
  comment?: string;
  check: boolean;
  split: boolean;
  force: boolean;
  timeout: number;
  pollInterval: number;
  nameSeparator?: '\\' | '/';
  maxDownloadBytes?: number;
  recordKey?: string;
  json: boolean;
  archive?: string;
}
