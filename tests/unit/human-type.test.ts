// A file's type in words (lib/view/format.ts humanType): what every screen shows for a file_type.
import { describe, expect, it } from 'vitest';
import { humanType } from '../../lib/view/format';

describe('humanType', () => {
  it('names an HL7 v2 message under any of the media types it is sent with', () => {
    expect(humanType('x-application/hl7-v2+er7')).toBe('HL7 v2 message');
    expect(humanType('application/hl7-v2')).toBe('HL7 v2 message');
    expect(humanType('application/x-hl7; charset=utf-8')).toBe('HL7 v2 message');
  });

  it('names FHIR, PDFs and pictures as a clinician says them', () => {
    expect(humanType('application/fhir+json')).toBe('FHIR resource');
    expect(humanType('application/fhir+xml')).toBe('FHIR resource');
    expect(humanType('application/pdf')).toBe('PDF');
    expect(humanType('image/jpeg')).toBe('JPEG image');
    expect(humanType('IMAGE/PNG')).toBe('PNG image');
    expect(humanType('image/heic')).toBe('HEIC image');
    expect(humanType('video/mp4')).toBe('MP4 video');
  });

  it('never shows a raw media type: an unknown one gets a generic word', () => {
    expect(humanType('application/x-unheard-of')).toBe('File');
    expect(humanType('application/octet-stream')).toBe('File');
    expect(humanType('')).toBe('File');
    expect(humanType('image/vnd.microsoft.icon')).toBe('Image');
    expect(humanType('text/x-markdown')).toBe('Text');
  });
});
