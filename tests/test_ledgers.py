"""Claims ledgers: every study has one, every quote is the seed's, every seed sentence is accounted for.

The ledger (``python/tcplab/studies/<study>/ledger.toml``, format in
:mod:`tcplab.studies.ledger`) maps each sentence of the seed to the checks that test
it, to a reason it is not testable here, to the set-up, or to context. These tests
read the seed texts kept in ``docs/seeds/``. The cross-check of ledger ids against a
study's ``findings.json`` runs on the tiny study outputs of each study's own test
(``tests/test_study_*.py``, :func:`tcplab.studies.ledger.Ledger.finding_problems`).
"""

from __future__ import annotations

import pytest

from tcplab import studies
from tcplab.studies import ledger


@pytest.mark.parametrize("name", studies.names())
def test_every_study_has_a_ledger_that_quotes_its_seed_and_covers_every_sentence(name: str) -> None:
    study = studies.get(name)
    lg = ledger.load(name)
    assert lg.study == name
    assert lg.seed.startswith(study.seed + "_"), (lg.seed, study.seed)
    problems = lg.problems(ledger.seed_text(lg.seed))
    assert problems == [], "\n".join(problems)
    cov = lg.coverage()
    assert cov["result_sentences"] == cov["checked"] + cov["not_testable"] + cov["setup"]
    assert cov["checked"] > 0


def test_a_ledger_with_an_unchecked_result_sentence_is_refused() -> None:
    with pytest.raises(ledger.LedgerError, match="needs findings"):
        ledger.Ledger.parse('study = "x"\nseed = "0_x"\n[[sentence]]\nid = "a"\ntext = "IW10 wins"\nstatus = "checked"\n',
                            "x.toml")
    with pytest.raises(ledger.LedgerError, match="needs a reason"):
        ledger.Ledger.parse('study = "x"\nseed = "0_x"\n[[sentence]]\nid = "a"\ntext = "IW10 wins"\n'
                            'status = "not testable"\n', "x.toml")
    with pytest.raises(ledger.LedgerError, match="status = 'maybe'"):
        ledger.Ledger.parse('study = "x"\nseed = "0_x"\n[[sentence]]\nid = "a"\ntext = "IW10 wins"\nstatus = "maybe"\n',
                            "x.toml")


def test_a_seed_line_left_out_of_the_ledger_is_found() -> None:
    lg = ledger.Ledger.parse('study = "x"\nseed = "0_x"\n[[sentence]]\nid = "a"\ntext = "IW10 improves performance"\n'
                             'status = "checked"\nfindings = ["F1"]\n', "x.toml")
    seed = "- IW10 improves performance\n- Fairness within both bursts worse with IW10\n"
    assert lg.problems(seed) == ["seed line not in the ledger: 'Fairness within both bursts worse with IW10'"]


def test_finding_ids_are_checked_against_findings_json() -> None:
    lg = ledger.Ledger.parse('study = "x"\nseed = "0_x"\n[[sentence]]\nid = "a"\ntext = "t"\nstatus = "checked"\n'
                             'findings = ["F1"]\n[[extension]]\nfindings = ["X1"]\nwhy = "ours"\n', "x.toml")
    ok = {"findings": [{"id": "F1", "checks": []}, {"id": "X1", "extension": True, "checks": []}]}
    assert lg.finding_problems(ok) == []
    bad = {"findings": [{"id": "F2", "checks": []}, {"id": "X1", "checks": []}]}
    assert lg.finding_problems(bad) == [
        "finding F2 is in findings.json but in no ledger sentence or extension",
        "finding X1: extension = False in findings.json, True in the ledger",
        "finding F1 is named in the ledger but not in findings.json"]


def test_checks_of_a_finding_that_was_not_run_are_not_looked_for() -> None:
    lg = ledger.Ledger.parse('study = "x"\nseed = "0_x"\n[[sentence]]\nid = "a"\ntext = "t"\nstatus = "checked"\n'
                             'findings = ["F1"]\nchecks = ["F1a"]\n', "x.toml")
    assert lg.finding_problems({"findings": [{"id": "F1", "verdict": "not run", "checks": []}]}) == []
    assert lg.finding_problems({"findings": [{"id": "F1", "verdict": "held", "checks": [{"id": "F1b"}]}]}) == [
        "check F1a is named in the ledger but not in findings.json"]
