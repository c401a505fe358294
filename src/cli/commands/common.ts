// Options every command has.
export interface CommonArgs {
  verbose: boolean;
}
