// The words for a file's state, each spelled once: the service's own (what its worker writes and its API lists), how
// a client reads a service's word (this service's or another's, in any case), and the client's own words for a file
// it did not upload or did not get back.

/** The states the service gives an uploaded file (the API's FileProcessingState). */
export const FileState = { Pending: 'Pending', Processing: 'Processing', Signed: 'Signed', Error: 'Error' } as const;
export type FileProcessingState = (typeof FileState)[keyof typeof FileState];
/** Every FileProcessingState, in the API's order. */
export const FILE_STATES: readonly FileProcessingState[] = Object.values(FileState);

/** A service's words (compared without case) that say a file was not signed. */
export const FAILED_STATES: ReadonlySet<string> = new Set(['error', 'failed', 'failure', 'rejected']);
/** A service's words (compared without case) for a state that is not final yet. */
export const PENDING_STATES: ReadonlySet<string> = new Set(['pending', 'processing', 'queued', 'inprogress', 'in progress', 'running']);
/** A service's words (compared without case) that say a file was signed. */
const SIGNED_STATES: ReadonlySet<string> = new Set(['signed', 'success']);

export const isFailedState = (state: string): boolean => FAILED_STATES.has(state.toLowerCase());
export const isPendingState = (state: string): boolean => PENDING_STATES.has(state.toLowerCase());
export const isSignedState = (state: string): boolean => SIGNED_STATES.has(state.toLowerCase());

/** The client's words for a file the service did not sign for it: not sent (signed already, or not needed), or not reported back. */
export const ClientFileState = { AlreadySigned: 'already-signed', NotUploaded: 'not-uploaded', Missing: 'Missing' } as const;
