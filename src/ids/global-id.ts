/** A global id as the relay plugin hands it to `node` and `nodes` (schema/builder.ts). */
export interface DecodedGlobalId {
  typename: string;
  id: string;
}

const NOTHING: DecodedGlobalId = { typename: '', id: '' };

/*
 * A global id is bound to the licensee it was made for: base64 of `Type:local@licensee`
 * (`Reservation:5001:700001@1001`), and `node`/`nodes` take it only from a request of that
 * licensee. Any other id is null, decided before any upstream call.
 *
 * Checked, not signed. Nothing trusts what an id says: the licensee in it is only compared with
 * the request's own, and the record is then asked for with the request's own token, which the
 * service confines to its own licensee's events (docs/upstream.md, "Transport": a token acts for
 * one systemIdentifier). A forged id naming the caller's licensee over another's event therefore
 * reaches nothing a client could not already ask by number (`event(eventId:)`), and the service
 * answers it as not found. A signature would add a secret to keep and rotate for no protection
 * beyond that; the check is what keeps a replayed id of another licensee from being looked up at
 * all.
 *
 * Ids made before the binding (`Type:local`, no licensee) are refused like another licensee's:
 * they cannot say whose they are, and every id has been re-issued by any query since.
 *
 * The schema's `node`/`nodes` and the webhooks' messages both write these ids, so they live below
 * both and import no GraphQL. The base64 is `@pothos/plugin-relay`'s `encodeGlobalID` and
 * `decodeGlobalID` on Node (Buffer, UTF-8), written out here so the webhooks need not load Pothos;
 * test/ids/global-id.test.ts holds the two to the same output.
 */

/** The global id of a record of `typename` for the licensee `licenseeId`. */
export function encodeLicenseeGlobalId(
  typename: string,
  localId: string | number | bigint,
  licenseeId: string,
): string {
  return encodeGlobalID(typename, `${localId}@${licenseeId}`);
}

/** Base64 of `Type:id`, as Pothos' `encodeGlobalID` writes it. */
function encodeGlobalID(typename: string, id: string): string {
  return Buffer.from(`${typename}:${id}`).toString('base64');
}

const BASE64 = /^(?:[\d+/A-Za-z]{4})*(?:[\d+/A-Za-z]{2}==|[\d+/A-Za-z]{3}=)?$/;
const TYPENAME = /^[A-Z_a-z]\w*$/;

/** The type and id of base64 `Type:id`, as Pothos' `decodeGlobalID` reads it; throws on anything else. */
function decodeGlobalID(globalID: string): DecodedGlobalId {
  if (!BASE64.test(globalID)) throw new Error('not base64');
  const [typename, ...rest] = Buffer.from(globalID, 'base64').toString().split(':');
  const id = rest.join(':');
  if (!typename || !rest[0] || !TYPENAME.test(typename)) throw new Error('not a global id');
  return { typename, id };
}

/**
 * The type and local id of a global id made for `licenseeId`; no type for any other id. Pothos'
 * decoder throws on what is not base64 of `Type:id`, and that error is not one of ours, so it
 * surfaced as INTERNAL_SERVER_ERROR: a malformed id names nothing, like another licensee's, and
 * `node`/`nodes` answer null for it, as for any id that does not exist.
 */
export function decodeLicenseeGlobalId(globalID: string, licenseeId: string): DecodedGlobalId {
  let decoded: DecodedGlobalId;
  try {
    // The ids of GroupCode, EventQuestion and CustomField were base64url before they were nodes:
    // the same text, so those still name their records.
    decoded = decodeGlobalID(asBase64(globalID));
  } catch {
    return NOTHING;
  }
  // A licensee id has no `@` (licensees file), while a local id may (a group code, an attendee id).
  const at = decoded.id.lastIndexOf('@');
  if (at < 0 || decoded.id.slice(at + 1) !== licenseeId) return NOTHING;
  return { typename: decoded.typename, id: decoded.id.slice(0, at) };
}

/** Base64url (no padding) as the padded base64 Pothos' decoder takes; base64 unchanged. */
function asBase64(id: string): string {
  const text = id.replaceAll('-', '+').replaceAll('_', '/');
  return text.includes('=') ? text : text.padEnd(Math.ceil(text.length / 4) * 4, '=');
}
