"""Tiny trilingual articles shared by the tests (a module with a unique name: nested conftest.py files shadow each other)."""

import json
from pathlib import Path

EN = [
    "The National Bank of Kazakhstan raised the base rate to 16.75 percent on March 12, 2024, because of inflation. "
    "Governor Timur Suleimenov said prices rose sharply in Astana.",
    "Kazatomprom increased uranium output by 5.2 percent in 2023 after new wells opened in Turkistan region. "
    "The company earned 1,200 billion tenge.",
    "The Ministry of Energy approved a new tariff on June 3, 2024. Electricity prices in Almaty rose by 12 percent "
    "despite protests.",
    "Samruk-Kazyna opened a data centre in Karaganda on October 1, 2023, with 300 jobs. Officials said demand "
    "increased by 40 percent.",
]
RU = [
    "Национальный банк Казахстана повысил базовую ставку до 16,75 процента 12 марта 2024 года из-за инфляции.",
    "Казатомпром увеличил добычу урана на 5,2 процента в 2023 году после запуска новых скважин.",
    "Министерство энергетики одобрило новый тариф 3 июня 2024 года. Цены в Алматы выросли на 12 процентов.",
]
KK = [
    "Қазақстан Ұлттық банкі 2024 жылғы 12 наурызда базалық мөлшерлемені 16,75 пайызға дейін көтерді.",
    "Қазатомөнеркәсіп 2023 жылы уран өндіруді 5,2 пайызға арттырды.",
    "Энергетика министрлігі 2024 жылғы 3 маусымда жаңа тарифті бекітті. Алматыда бағалар 12 пайызға өсті.",
]


def write_jsonl(path: Path, rows: list) -> Path:
    """The tests' one JSONL writer: a row a line, UTF-8; a str row is written as it is (a broken line, on purpose)."""
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r, ensure_ascii=False)) + "\n" for r in rows), encoding="utf-8"
    )
    return path
