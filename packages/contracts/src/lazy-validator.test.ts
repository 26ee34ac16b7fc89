import { describe, expect, it, jest } from '@jest/globals';
import { Type } from '@sinclair/typebox';
import { ajv, lazyValidator } from './ajv.js';

/** How many schemas Ajv compiles while `run` runs. */
function compilesDuring(run: () => void): number {
  const spy = jest.spyOn(ajv, 'compile');
  try {
    run();
    return spy.mock.calls.length;
  } finally {
    spy.mockRestore();
  }
}

describe('lazyValidator', () => {
  it('compiles its schema on the first call, not when it is made, and once', () => {
    const schema = Type.Object({ n: Type.Integer() }, { $id: 'LazyFirstCall' });
    let validate = lazyValidator<{ n: number }>(Type.Object({}));
    expect(compilesDuring(() => (validate = lazyValidator<{ n: number }>(schema)))).toBe(0);
    expect(compilesDuring(() => expect(validate({ n: 1 })).toBe(true))).toBe(1);
    expect(compilesDuring(() => expect(validate({ n: 2 })).toBe(true))).toBe(0);
  });

  it("reports the last call's errors", () => {
    const validate = lazyValidator(Type.Object({ n: Type.Integer() }));
    expect(validate.errors).toBeUndefined();
    expect(validate({ n: 'one' })).toBe(false);
    expect(validate.errors?.map((error) => error.instancePath)).toEqual(['/n']);
    expect(validate({ n: 2 })).toBe(true);
    expect(validate.errors).toBeNull();
  });

  it('compiles a schema whose id Ajv met inside another first', () => {
    // A parent without an `$id`, as most answers are: Ajv cannot resolve the item's id from it,
    // and with `addUsedSchema` on it refused the item as "already exists".
    const item = Type.Object({ id: Type.String() }, { $id: 'LazyListItem' });
    const validateList = lazyValidator(Type.Object({ data: Type.Array(item) }));
    const validateItem = lazyValidator(item);
    expect(validateList({ data: [{ id: 'a' }] })).toBe(true);
    expect(validateItem({ id: 'b' })).toBe(true);
    expect(validateItem({ id: 1 })).toBe(false);
  });

  it('compiles when warmed, before any call', () => {
    const validate = lazyValidator(Type.Object({}));
    expect(compilesDuring(() => validate.warm())).toBe(1);
    expect(compilesDuring(() => validate({}))).toBe(0);
  });
});
