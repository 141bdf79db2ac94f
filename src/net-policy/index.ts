export { parseCidr, parseCidrList, splitList, type Cidr } from './cidr.js';
export { DestinationPolicy, describeDenial, normalizeAddress, type NamedRange, type PolicyRules, type Verdict } from './destination-policy.js';
export { LOCAL_AND_METADATA_RANGES, wellKnownAddresses } from './local-ranges.js';
export { assertLiteralAllowed, guardedLookup } from './guarded-connect.js';
