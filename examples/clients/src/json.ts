/** A value of the JSON scalar (ECMA-404): what codegen and relay-compiler map `JSON` to. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
