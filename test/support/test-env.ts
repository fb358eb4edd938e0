// Lives in @switchboard/harness so package tests can use it without reaching into test/; tests here keep importing from here.
export * from '@switchboard/harness/test-env';
