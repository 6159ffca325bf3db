#!/usr/bin/env python3
"""Submits a repair quote, books a mechanic for it, completes it and prints the receipt.

    QUOTED_ENDPOINT=tcp://127.0.0.1:5555 python3 submit_and_book.py
"""
import sys

from quoted_client import Client, QuotedError


def money(cents):
    return f"${cents // 100}.{cents % 100:02d}"


def main():
    client = Client(sys.argv[1] if len(sys.argv) > 1 else None)
    quote = client.submit(
        customer={"name": "John Lee", "email": "john.lee@example.com", "address": "12 Elm Street"},
        car={"make": "Toyota", "model": "Camry", "year": 2015, "trim": "LE"},
        services=["Oil Change", "Brake Inspection"],
    )
    print(f"submitted quote {quote['id']}: {quote['state']}, {money(quote['priceCents'])}")

    try:
        booked = client.call("book", quoteId=quote["id"])["quote"]
    except QuotedError as error:
        if error.code != "no_mechanic_available":
            raise
        # Everyone is busy: wait in line; quoted books it as soon as a mechanic is free.
        reply = client.call("book", quoteId=quote["id"], wait=True)
        print(f"no mechanic free: quote {quote['id']} waits in line at position {reply['waitPosition']}")
        return
    mechanic = booked["mechanic"]
    print(f"booked quote {booked['id']} with {mechanic['name']} ({mechanic['skill']})")

    completed = client.call("complete", quoteId=quote["id"])["quote"]
    receipt = completed["receipt"]
    for line in receipt["lines"]:
        print(f"  {line['name']:<24} {money(line['priceCents']):>10}")
    print(f"completed quote {completed['id']}: total {money(receipt['totalCents'])}")


if __name__ == "__main__":
    try:
        main()
    except QuotedError as error:
        print(f"refused: {error}", file=sys.stderr)
        for problem in error.problems:
            print(f"  - {problem['field']}: {problem['message']}", file=sys.stderr)
        sys.exit(1)
    except TimeoutError as error:
        print(error, file=sys.stderr)
        sys.exit(69)
