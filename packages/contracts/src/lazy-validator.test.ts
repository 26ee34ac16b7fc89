import { describe, expect, it } from '@jest/globals';
import { Type } from '@sinclair/typebox';
import { ajv, lazyValidator } from './ajv.js';

describe('lazyValidator', () => {
  it('compiles its schema on the first call, not when it is made', () => {
    const schema = Type.Object({ n: Type.Integer() }, { $id: 'LazyFirstCall' });
    const validate = lazyValidator<{ n: number }>(schema);
    expect(ajv.getSchema('LazyFirstCall')).toBeUndefined();
    expect(validate({ n: 1 })).toBe(true);
    expect(ajv.getSchema('LazyFirstCall')).toBeDefined();
  });

  it("reports the last call's errors", () => {
    const validate = lazyValidator(Type.Object({ n: Type.Integer() }));
    expect(validate.errors).toBeUndefined();
    expect(validate({ n: 'one' })).toBe(false);
    expect(validate.errors?.map((error) => error.instancePath)).toEqual(['/n']);
    expect(validate({ n: 2 })).toBe(true);
    expect(validate.errors).toBeNull();
  });

  it('takes a schema Ajv already compiled inside another, whichever is called first', () => {
    const item = Type.Object({ id: Type.String() }, { $id: 'LazyListItem' });
    const list = Type.Object({ data: Type.Array(item) }, { $id: 'LazyList' });
    const validateList = lazyValidator(list);
    const validateItem = lazyValidator(item);
    expect(validateList({ data: [{ id: 'a' }] })).toBe(true);
    // Ajv itself would refuse to compile the item now: its id is taken by the list's copy.
    expect(validateItem({ id: 'b' })).toBe(true);
    expect(validateItem({ id: 1 })).toBe(false);
  });

  it('compiles when warmed, before any call', () => {
    const validate = lazyValidator(Type.Object({}, { $id: 'LazyWarmed' }));
    validate.warm();
    expect(ajv.getSchema('LazyWarmed')).toBeDefined();
  });
});
