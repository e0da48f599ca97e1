// Package docs drafts policies from a company's documents: text extraction
// (PDF, DOCX with headers, footers and tables, TXT; type from content,
// decompressed sizes capped), obligations found by modal and prohibition
// language grouped by section heading, the regulatory framework and policy
// type detected from the text, and the document jobs (records in SQL, run
// in the background on any replica, resumed or failed after a restart).
package docs
