/**
 * A global id as the gateway writes it for a licensee: base64 of `Type:local@licensee`
 * (src/ids/global-id.ts). Tests build ids by hand to reach ids no query would hand out.
 */
export function globalId(typeAndLocalId: string, licensee = '1001'): string {
  return Buffer.from(`${typeAndLocalId}@${licensee}`).toString('base64');
}
