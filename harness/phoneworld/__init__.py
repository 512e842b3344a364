"""harness/phoneworld"""
