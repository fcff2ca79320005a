import { describe, expect, it } from 'vitest';
import { toCsv } from '../../../src/shared/csv';

describe('toCsv', () => {
  it('quotes what needs quoting and leaves NULL empty', () => {
    expect(
      toCsv(
        ['id', 'note', 'tags', 'ok'],
        [
          [1, 'say "hi", then go', ['a', 'b'], true],
          [2, null, [], false],
          [3, ' padded', 'line\nbreak', null],
        ],
      ),
    ).toBe(
      'id,note,tags,ok\r\n1,"say ""hi"", then go","[""a"",""b""]",true\r\n2,,[],false\r\n3," padded","line\nbreak",\r\n',
    );
  });
});
