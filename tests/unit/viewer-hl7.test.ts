import { describe, expect, it } from 'vitest';
import { hl7Time, readHl7, unescapeHl7 } from '../../lib/view/viewer/hl7';

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
    expect(view.orders).toEqual(['Complete blood count (CBC)']);
    expect(view.results.map((r) => [r.test, r.value, r.unit, r.range, r.flag, r.status])).toEqual([
      ['Hemoglobin (718-7)', '10.2', 'grams per deciliter', '12.0-15.5', 'Low', 'Final'],
      ['WBC (6690-2)', '11.8', '10*3/uL', '4.5-11.0', 'High', 'Final'],
      ['Comment (COMMENT)', 'Sample A|B ^ 5&6 ~ path C:\\lab', '', '', 'Normal', 'Final'],
      ['Blood group (GRP)', 'A positive (A+)', '', '', '', 'Final'],
    ]);
    expect(view.results[0]!.time).toBe('2024-03-05 13:00');
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
