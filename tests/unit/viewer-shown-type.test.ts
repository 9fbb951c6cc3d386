import { describe, expect, it } from 'vitest';
import { kindOf } from '../../lib/view/viewer/kind';
import { shownType } from '../../lib/view/viewer/shown-type';

const bytes = (text: string) => new TextEncoder().encode(text);
const ORU = 'MSH|^~\\&|LAB|ST MARY HOSPITAL|||202401021200||ORU^R01|1|P|2.5\rPID|1||123||DOE^JANE\r';

describe("the viewer header's type", () => {
  it('an HL7 message uploaded as text/plain reads HL7, whatever its name', () => {
    expect(shownType(kindOf('cbc.hl7', 'text/plain', bytes(ORU)), 'text/plain')).toBe('HL7 v2 message');
    expect(shownType(kindOf('result.txt', 'text/plain', bytes(ORU)), 'text/plain')).toBe('HL7 v2 message');
  });

  it('other content the declared type does not name reads as what it is', () => {
    expect(shownType(kindOf('obs.json', 'application/json', bytes('{"resourceType":"Observation"}')), 'application/json')).toBe('FHIR resource');
    expect(shownType(kindOf('letter', 'application/octet-stream', bytes('%PDF-1.4\n')), 'application/octet-stream')).toBe('PDF');
  });

  it('a FHIR resource reads as its resourceType once its bytes are here', () => {
    const observation = bytes('{"resourceType":"Observation","status":"final"}');
    expect(shownType(kindOf('k.json', 'application/fhir+json', observation), 'application/fhir+json', observation)).toBe('FHIR Observation');
    expect(shownType('fhir', 'application/fhir+json')).toBe('FHIR resource');
    expect(shownType('json', 'application/json', bytes('{"resourceType":"Patient"}'))).toBe('JSON');
  });

  it('the declared type in words when it already says what the content is', () => {
    expect(shownType(kindOf('notes.txt', 'text/plain', bytes('Seen today, stable.')), 'text/plain')).toBe('Text');
    expect(shownType(kindOf('a.hl7', 'application/hl7-v2', bytes(ORU)), 'application/hl7-v2')).toBe('HL7 v2 message');
    expect(shownType(kindOf('photo.png', 'image/png', new Uint8Array([0x89, 0x50])), 'image/png')).toBe('PNG image');
  });
});
