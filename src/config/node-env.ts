/**
 * Imported first by main.ts, before graphql is loaded: graphql-js checks NODE_ENV once, when it
 * loads, and outside production runs a costly cross-realm check on every `instanceof` of its
 * classes (4–5 % of a 1000-record page's CPU when profiled). Set explicitly, it is kept.
 */
process.env.NODE_ENV ??= 'production';
