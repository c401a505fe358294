// Key rotation: a job is signed with the keys its organization's options had when it was accepted. The upload
// records them (JobRecord.acceptedKeys); the worker finds each among the option's current key and its previousKeys,
// so that a job in flight when an option's key changes finishes with the old key and a new job gets the new one.
import type { License, Organization } from '../server-config.js';
import type { JobRecord } from '../domain/job.js';

/**
 * What a job records when it is accepted: who uploaded it (the user and the access token's id, never the token) and
 * the keys of the organization's options at that moment.
 */
export function acceptance(principal: {
  readonly organization: Organization;
  readonly user: string;
  readonly tokenId: string | null;
}): Pick<JobRecord, 'submittedBy' | 'acceptedKeys'> {
  return { submittedBy: { user: principal.user, tokenId: principal.tokenId }, acceptedKeys: acceptedKeysOf(principal.organization) };
}

/** What an accepted job records of its organization's keys. */
export function acceptedKeysOf(org: Organization): NonNullable<JobRecord['acceptedKeys']> {
  return org.licenses.map((l) => ({ optionId: l.optionId, token: l.token }));
}

/** The organization as a job signs: each option with the key the job was accepted with. */
export interface JobKeys {
  readonly organization: Organization;
  /** Keys the job was accepted with that the configuration no longer holds: public key token to option. */
  readonly retired: ReadonlyMap<string, number>;
}

/**
 * The organization with each license's key replaced by the one `accepted` names (the current key, or one of its
 * previousKeys); an option whose accepted key is no longer configured is left out (and listed in `retired`), an
 * option added since the job was accepted is left out too. Without `accepted` (a job of an older version), the
 * current keys.
 */
export function keysForJob(org: Organization, accepted: JobRecord['acceptedKeys']): JobKeys {
  if (!accepted) return { organization: org, retired: new Map() };
  const retired = new Map<string, number>();
  const licenses: License[] = [];
  for (const { optionId, token } of accepted) {
    const license = org.licenses.find((l) => l.optionId === optionId);
    const key = license && [license, ...license.previous].find((k) => k.token === token);
    if (!license || !key) {
      retired.set(token, optionId);
      continue;
    }
    licenses.push(
      key === license
        ? license
        : {
            optionId,
            previous: license.previous,
            key: key.key,
            token: key.token,
            keyLocation: key.keyLocation,
            ...(key.keyPairPath ? { keyPairPath: key.keyPairPath } : {}),
          },
    );
  }
  return { organization: { ...org, licenses }, retired };
}
