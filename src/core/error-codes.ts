// The catalog of stable error codes. docs/errors.md has one row per code; a test keeps the two in step.

export const ErrorCodes = {
  // Reading files
  SG_ERR_IO_READ: 'The file could not be read from disk.',
  SG_ERR_IO_WRITE: 'The output file could not be written.',
  // PE / COFF (ECMA-335 II.25)
  SG_ERR_PE_TRUNCATED: 'The file ends inside a PE structure.',
  SG_ERR_PE_NOT_MZ: 'The file does not start with the MZ signature of a PE file.',
  SG_ERR_PE_BAD_LFANEW: 'e_lfanew points outside the file or into the DOS header.',
  SG_ERR_PE_NOT_PE: 'No PE\\0\\0 signature at e_lfanew.',
  SG_ERR_PE_BAD_MAGIC: 'The optional header magic is neither 0x10B (PE32) nor 0x20B (PE32+).',
  SG_ERR_PE_BAD_OPTIONAL_HEADER: 'SizeOfOptionalHeader or NumberOfRvaAndSizes is too small for the fields that must be read.',
  SG_ERR_PE_TOO_MANY_SECTIONS: 'NumberOfSections is larger than any real image uses.',
  SG_ERR_PE_SECTION_OUT_OF_FILE: 'A section header points at raw data beyond the end of the file.',
  SG_ERR_PE_SECTION_OVERLAP: 'Two sections share raw file bytes.',
  SG_ERR_PE_NO_ROOM: 'The PE headers have no room for one more section header.',
  SG_ERR_PE_OVERLAY: 'An Authenticode certificate table follows the last section, where a new section would go.',
  SG_ERR_PE_RVA_UNMAPPED: 'An RVA does not lie inside the raw data of any section.',
  // CLI header (II.25.3.3)
  SG_ERR_CLI_BAD_HEADER: 'The CLI (COR20) header is too small or malformed.',
  // Metadata (II.24)
  SG_ERR_MD_TRUNCATED: 'The file ends inside a metadata structure.',
  SG_ERR_MD_BAD_SIGNATURE: 'The metadata root does not start with BSJB.',
  SG_ERR_MD_BAD_STREAM: 'A metadata stream header is malformed or points outside the metadata.',
  SG_ERR_MD_DUPLICATE_STREAM: 'A metadata stream name occurs twice.',
  SG_ERR_MD_MISSING_STREAM: 'A required metadata stream is missing.',
  SG_ERR_MD_BAD_TABLES: 'The #~ table stream header is malformed.',
  SG_ERR_MD_ROW_COUNT: 'A table row count is larger than the table stream can hold.',
  SG_ERR_MD_BAD_INDEX: 'A table or coded index points at a row that does not exist.',
  SG_ERR_MD_BAD_HEAP_INDEX: 'A heap index points outside its heap.',
  SG_ERR_MD_BAD_COMPRESSED_INT: 'A compressed integer is invalid or truncated.',
  SG_ERR_MD_NESTING_CYCLE: 'Nested-type or resolution-scope chains form a cycle.',
  SG_ERR_MD_BAD_SIGNATURE_BLOB: 'A member signature blob is malformed.',
  SG_ERR_MD_BAD_ATTRIBUTE: 'A custom attribute has a malformed constructor or value blob.',
  SG_ERR_MD_BUDGET: 'Reading the metadata would exceed a reader budget (name length, decoded bytes, attributes or rows scanned per module).',
  // Keys (strong-naming.md section 6)
  SG_ERR_KEY_BAD_BLOB: 'The key file or public key blob is not a valid CAPI RSA key blob.',
  SG_ERR_KEY_NOT_PAIR: 'A key pair (.snk with the private key) is needed, but the file holds only a public key.',
  SG_ERR_KEY_MISMATCH: 'The key pair does not belong to the public key in the assembly.',
  SG_ERR_KEY_ECMA: 'The assembly uses the ECMA neutral key; only Microsoft can sign it.',
  // Keys in a PKCS#11 token (HSM, smart card, SoftHSM)
  SG_ERR_PKCS11_URI: 'The pkcs11: key URI is not valid (RFC 7512), or it carries a PIN.',
  SG_ERR_PKCS11_MODULE: 'The PKCS#11 module (or the pkcs11js binding that loads it) could not be loaded or initialized.',
  SG_ERR_PKCS11_TOKEN: 'No token that the pkcs11: URI names is present in the module.',
  SG_ERR_PKCS11_PIN: "The PIN for the token is missing, cannot be read, or was refused, or the token's PIN is on its final try or locked.",
  SG_ERR_PKCS11_KEY: "The token holds no RSA private key that the pkcs11: URI names, or more than one, or its key is not the configured public key's.",
  SG_ERR_PKCS11_SIGN: 'The PKCS#11 module refused or failed the signing operation.',
  // Strong names (section 7)
  SG_ERR_SN_NOT_STRONG_NAMED: 'The assembly carries no public key or no signature slot.',
  SG_ERR_SN_BAD_SLOT: 'The strong-name signature slot is misplaced or has the wrong size.',
  SG_ERR_SN_NONSTANDARD_HEADER: 'The PE headers are not of the standard size, so the signed byte ranges are ambiguous.',
  SG_ERR_SN_HEADERS_IN_SECTION: "A section's raw data covers the PE headers, so the checksum would be written inside the signed bytes.",
  SG_ERR_SN_CRYPTO: 'The crypto library refused the operation.',
  // Strong-naming built assemblies (signgate fix)
  SG_ERR_FIX_NOT_MANAGED: 'The file is a native PE image, not a .NET assembly; it has no strong name to give.',
  SG_ERR_FIX_NETMODULE: 'The file is a netmodule; it gets its strong name through the assembly that links it.',
  SG_ERR_FIX_REFERENCE_ASSEMBLY: 'The file is a reference assembly (ReferenceAssemblyAttribute); fix the implementation assembly instead.',
  SG_ERR_FIX_OTHER_PUBLISHER: 'The assembly is signed by another publisher; changing it would change its identity for every other consumer.',
  SG_ERR_FIX_REFERENCE_MISSING:
    'An assembly references a library without a strong name that is not among the inputs; fix can strong-name only the files it is given.',
  SG_ERR_FIX_DEPENDENCY_REFUSED:
    "The assembly is tied to one that could not be fixed (a reference, a friend or a satellite's main assembly); fixing one without the other would break the reference.",
  // Authenticode (PE certificate table, PKCS#7 SignedData)
  SG_ERR_AC_BAD_TABLE: 'The certificate table (data directory 4) lies outside the file or holds a malformed WIN_CERTIFICATE entry.',
  SG_ERR_AC_BAD_SIGNATURE: 'An Authenticode entry is not a well-formed PKCS#7 SignedData with SpcIndirectDataContent.',
  SG_ERR_AC_BUDGET: 'The certificate table is larger, holds more entries or nests ASN.1 deeper than signgate reads.',
  SG_ERR_AC_TRUST_STORE: 'The trust store file holds no readable PEM certificate.',
  // Signing service
  SG_ERR_HTTP_STATUS: 'The signing service answered with an error status.',
  SG_ERR_HTTP_UNREACHABLE: 'The signing service could not be reached.',
  SG_ERR_HTTP_TIMEOUT: 'The signing service did not answer in time.',
  SG_ERR_HTTP_BAD_RESPONSE: 'The signing service answered with a body that does not follow the API.',
  SG_ERR_HTTP_INSECURE: 'The base URL is plain HTTP to a host that is not this machine.',
  SG_ERR_NOT_SIGNED: "A file sent to the signing service did not come back signed with the organization's key and changed in nothing else.",
  SG_ERR_RECORD_PROOF:
    "The service's signature record does not prove what it must: a checkpoint not signed by its record key, an entry not in it, or a tree that is smaller than, or does not continue, the one seen before.",
  // Command line and configuration
  SG_ERR_USAGE: 'The command line is not valid.',
  SG_ERR_CONFIG: 'The configuration file is not valid.',
  SG_ERR_SCHEMA_NEWER: "The service's database is on a schema newer than this release knows, and its newer migrations do not let this release run on it.",
  SG_ERR_NO_INPUT: 'No input file matched, or the inputs hold no .dll or .exe file (an empty folder).',
  SG_ERR_INTERNAL: 'An unexpected internal error.',
} as const;

export type ErrorCode = keyof typeof ErrorCodes;
