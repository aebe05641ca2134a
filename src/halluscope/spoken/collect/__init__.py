"""The corpus data pipeline of Lost in Speech (seed 000, 3.1, 3.2 and the Ethical Considerations): collect news
pages, remove near-duplicates, machine-translate with validation, and release without the original texts.

'halluscope corpus collect | dedup | translate | release | rehydrate' (cli/corpus.py):

- collect (pages.py): saved HTML pages (or URLs, fetched and saved) -> corpus rows with outlet, date, language and
  topic, extracted by trafilatura; every row keeps the page's file, URL and sha256.
- dedup (dedup.py): MinHash near-duplicate removal (datasketch), per language; the threshold and every removed pair
  (with its estimated and exact Jaccard similarity) are written to a report.
- translate (translate.py): any chat backend translates; every translation is validated by back-translation
  similarity, length ratio and language id, and the report lists each check.
- release / rehydrate (release.py): the release holds URLs, page hashes, extraction offsets and text hashes instead
  of the texts (own translations are kept: they are the release's own content); rehydrate re-extracts each text
  from the pages and verifies its hash, so the rebuilt corpus is byte-identical or the item is reported.

Needs the 'collect' extra (trafilatura, datasketch) for collect, dedup and rehydrate.
"""
