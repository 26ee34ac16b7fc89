// The throwaway CA lives in packages/testing, which the benchmark (plain .mjs over dist) uses too.
export { RECEIVER_HOST, createTestCertificates, type TestCertificates } from '@gateway/testing';
