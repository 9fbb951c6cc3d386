import { describe, expect, it } from 'vitest';
import { hl7Time, readHl7, resultsSummary, unescapeHl7 } from '../../lib/view/viewer/hl7';

// An ORU^R01 as a hospital lab sends it: \r between segments, a patient with two identifiers
// (repetition ~), an order, four results with flags and comments, escape sequences in values.
const ORU = [
  'MSH|^~\\&|LABSYS|ST MARY HOSPITAL^1.2.3.4^ISO|EHR|NORTH CLINIC|20240305143000+0100||ORU^R01^ORU_R01|MSG00042|P|2.5.1',
  'PID|1||555123^^^STMARY^MR~9876543210^^^NHS^NH||DOE^JANE^Q^^DR||19750412|F|||12 HIGH ST^^LEEDS^^LS1 4AP^GB',
  'PV1|1|O|CLINIC^ROOM 2',
  'OBR|1|ORD123|FIL456|CBC^Complete blood count^L|||20240305120000',
  'OBX|1|NM|718-7^Hemoglobin^LN||10.2|g/dL^grams per deciliter|12.0-15.5|L|||F|||20240305130000',
  'OBX|2|NM|6690-2^WBC^LN||11.8|10*3/uL|4.5-11.0|H|||F',
  'NTE|1||Repeat in 2 weeks\\.br\\if symptomatic',
  'OBX|3|ST|COMMENT^Comment^L||Sample A\\F\\B \\S\\ 5\\T\\6 \\R\\ path C:\\E\\lab|||N|||F',
  'OBX|4|CWE|GRP^Blood group^L||A+^A positive^LOCAL||||||F',
].join('\r');

describe('readHl7', () => {
  it('reads the header, the patient with repeated identifiers, and every result', () => {
    const view = readHl7(ORU);
    expect(view.problems).toEqual([]);
    expect(view.header).toMatchObject({ messageType: 'ORU^R01', sendingApplication: 'LABSYS', controlId: 'MSG00042', version: '2.5.1' });
    expect(view.header!.sendingFacility).toContain('ST MARY HOSPITAL');
    expect(view.header!.time).toBe('2024-03-05 14:30 +0100');
    expect(view.patient).toMatchObject({ name: 'DR JANE Q DOE', birthDate: '1975-04-12', sex: 'Female' });
    expect(view.patient!.identifiers).toEqual(['555123 (MR)', '9876543210 (NH)']);
    expect(view.orders).toEqual([{ test: 'Complete blood count (CBC)', collected: '2024-03-05 12:00', received: '' }]);
    expect(view.results.map((r) => [r.test, r.value, r.unit, r.range, r.flag?.label ?? '', r.status])).toEqual([
      ['Hemoglobin (718-7)', '10.2', 'grams per deciliter', '12.0-15.5', 'Low', 'Final'],
      ['WBC (6690-2)', '11.8', '10*3/uL', '4.5-11.0', 'High', 'Final'],
      ['Comment (COMMENT)', 'Sample A|B ^ 5&6 ~ path C:\\lab', '', '', 'Normal', 'Final'],
      ['Blood group (GRP)', 'A positive (A+)', '', '', '', 'Final'],
    ]);
    // OBX-14 where the result has one, else its order's OBR-7: two collection times in this message.
    expect(view.results.map((r) => r.collected)).toEqual(['2024-03-05 13:00', '2024-03-05 12:00', '2024-03-05 12:00', '2024-03-05 12:00']);
    expect(view.collected).toEqual(['2024-03-05 13:00', '2024-03-05 12:00']);
    expect(view.results.map((r) => r.flag?.level ?? null)).toEqual(['abnormal', 'abnormal', 'normal', null]);
    expect([view.abnormal, view.critical]).toEqual([2, 0]);
    expect(resultsSummary(view)).toBe('2 of 4 results abnormal');
    expect(view.results[1]!.notes).toEqual(['Repeat in 2 weeks\nif symptomatic']);
    // PV1 and OBR listed with their field names.
    const pv1 = view.segments.find((s) => s.name === 'PV1')!;
    expect(pv1.fields).toContainEqual({ position: 'PV1-3', name: 'Assigned patient location', value: 'CLINIC ROOM 2' });
    expect(view.segments.map((s) => s.name)).toEqual(['PV1', 'OBR']);
  });

  it('accepts \\n or \\r\\n between segments and a byte-order mark', () => {
    const view = readHl7(`\uFEFF${ORU.replace(/\r/g, '\r\n')}\r\n`);
    expect(view.results).toHaveLength(4);
    expect(readHl7(ORU.replace(/\r/g, '\n')).patient!.name).toBe('DR JANE Q DOE');
  });

  it('a final line break (or a blank line) is no segment: no warning, no empty row', () => {
    const plain = readHl7(ORU);
    for (const ending of ['\r', '\n', '\r\n', '\r\n\r\n', '\n  \n']) {
      const view = readHl7(ORU + ending);
      expect(view.problems, JSON.stringify(ending)).toEqual([]);
      expect(view.segments, JSON.stringify(ending)).toEqual(plain.segments);
      expect(view.results).toHaveLength(4);
    }
    const blankInside = readHl7(ORU.replace('\rPV1', '\r\rPV1'));
    expect(blankInside.problems).toEqual([]);
    expect(blankInside.segments.map((s) => s.name)).toEqual(['PV1', 'OBR']);
    // A line that is not a segment still says so.
    expect(readHl7(`${ORU}\rhello there`).problems).toEqual(['A line starting “hello there” is not a segment; it is listed as it is.']);
  });

  it('flags critical results, reads an unflagged value against its range, and never flags a withdrawn result', () => {
    const view = readHl7(
      [
        'MSH|^~\\&|LAB|H|EHR|C|20240305143000||ORU^R01|9|P|2.5.1',
        'OBR|1|||K^Renal^L|||20240305081500',
        'OBX|1|NM|K^Potassium^L||6.9|mmol/L|3.5-5.1|HH|||F',
        'OBX|2|NM|NA^Sodium^L||128|mmol/L|135-145||||F',
        'OBX|3|NM|CR^Creatinine^L||80|umol/L|45-90||||F',
        'OBX|4|NM|GLU^Glucose^L||2.1|mmol/L|3.9-7.8|LL|||D',
        'OBX|5|ST|APP^Appearance^L||Cloudy||Clear|A|||F',
        'OBX|6|NM|U^Urea^L||<1.0|mmol/L|2.5-7.8||||F',
        'OBX|7|NM|HB^Haemoglobin^L||9.1|g/dL|12-15|W|||F',
        'OBX|8|NM|PLT^Platelets^L||250|10*9/L|150-400|W|||F',
        'SPM|1|||BLD|||||||||||||20240305080000',
        '',
      ].join('\r'),
    );
    expect(view.results.map((r) => [r.test, r.flag?.label ?? null, r.flag?.symbol ?? null])).toEqual([
      ['Potassium (K)', 'Critically high', '↑↑'],
      ['Sodium (NA)', 'Below range', '↓'],
      ['Creatinine (CR)', 'In range', ''],
      ['Glucose (GLU)', null, null],
      ['Appearance (APP)', 'Abnormal', '!'],
      // "<1.0" is not a number: no reading against the range.
      ['Urea (U)', null, null],
      // A code this reader does not know ("W", worse) does not hide a value outside its range…
      ['Haemoglobin (HB)', 'Below range', '↓'],
      // …and inside it, the lab's code is shown as it is.
      ['Platelets (PLT)', 'W', ''],
    ]);
    expect([view.abnormal, view.critical]).toEqual([4, 1]);
    expect(resultsSummary(view)).toBe('4 of 8 results abnormal, 1 critical');
    // The collection time is OBR-7's; SPM-17 does not replace it.
    expect(view.collected).toEqual(['2024-03-05 08:15']);
    expect(view.problems).toEqual([]);
  });

  it('takes the collection time from the specimen (SPM-17) when the order gives none', () => {
    const view = readHl7(['MSH|^~\\&|LAB|H|EHR|C|20240305143000||ORU^R01|9|P|2.5.1', 'OBR|1|||K^Renal^L', 'OBX|1|NM|K^Potassium^L||4.0|mmol/L|3.5-5.1||||F', 'SPM|1|||BLD|||||||||||||20240305074500^20240305075000'].join('\r'));
    expect(view.collected).toEqual(['2024-03-05 07:45']);
    expect(view.results[0]!.collected).toBe('2024-03-05 07:45');
    expect(resultsSummary(view)).toBe('The result is not flagged abnormal');
    expect(resultsSummary({ results: [view.results[0]!, view.results[0]!], abnormal: 0, critical: 0 })).toBe('None of the 2 results is flagged abnormal');
  });

  it('says what is wrong with a truncated message and keeps what could be read', () => {
    const cut = ORU.slice(0, ORU.indexOf('OBX|2|') + 'OBX|2|NM|6690'.length);
    const view = readHl7(cut);
    expect(view.header!.messageType).toBe('ORU^R01');
    expect(view.results).toHaveLength(2);
    expect(view.results[0]!.value).toBe('10.2');
    expect(view.problems.join(' ')).toMatch(/cut short.*truncated/);
  });

  it('lists the lines of something that is not HL7 at all', () => {
    const view = readHl7('hello|world\nsecond line');
    expect(view.header).toBeNull();
    expect(view.problems[0]).toMatch(/does not start with an MSH/);
    expect(view.segments).toHaveLength(2);
    const headerOnly = readHl7('MSH|^~\\&|A');
    expect(headerOnly.problems.join(' ')).toMatch(/message type is missing/);
  });

  it('honours custom delimiters from MSH-1/2', () => {
    const view = readHl7('MSH#*~\\&#APP#FAC#####ADT*A01#1#P#2.3\rPID#1##42##ROE*RICHARD');
    expect(view.header!.messageType).toBe('ADT^A01');
    expect(view.patient!.name).toBe('RICHARD ROE');
  });
});

describe('unescapeHl7 and hl7Time', () => {
  const s = { field: '|', component: '^', repetition: '~', escape: '\\', subcomponent: '&' };
  it('decodes every escape sequence', () => {
    expect(unescapeHl7('\\F\\\\S\\\\T\\\\R\\\\E\\', s)).toBe('|^&~\\');
    expect(unescapeHl7('a\\X4142\\c \\H\\bold\\N\\', s)).toBe('aABc bold');
    expect(unescapeHl7('plain', s)).toBe('plain');
  });
  it('formats timestamps of every precision', () => {
    expect(hl7Time('2024')).toBe('2024');
    expect(hl7Time('20240305')).toBe('2024-03-05');
    expect(hl7Time('202403051430')).toBe('2024-03-05 14:30');
    expect(hl7Time('not a date')).toBe('not a date');
  });
});
