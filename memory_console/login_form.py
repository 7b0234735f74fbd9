"""The console's login form: Django's, and one more answer.

Django refuses a deactivated account's login with the words it uses for a wrong password,
so a person a superuser deactivated is told to check a password that is right. Here, a
deactivated account whose password is right is told it is deactivated. Only then: a wrong
password gets the usual answer whether or not the account exists or is active, so the
message tells a guesser nothing they could not find by guessing the password. A deactivated
account's password is checked once, as authenticate() would check it, so the answer takes
no longer than anyone else's.
"""

from django.contrib.auth import get_user_model
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError
from django.views.decorators.debug import sensitive_variables


class ConsoleLoginForm(AuthenticationForm):
    error_messages = {
        "invalid_login": "Your username and password did not match. Please try again.",
        "inactive": (
            "This account is deactivated, so it cannot log in. Ask a superuser to reactivate it."
        ),
    }

    @sensitive_variables("password")
    def clean(self):
        username = self.cleaned_data.get("username")
        password = self.cleaned_data.get("password")
        if username is not None and password:
            User = get_user_model()
            deactivated = User._default_manager.filter(
                **{User.USERNAME_FIELD: username}, is_active=False
            ).first()
            if deactivated is not None:
                if deactivated.check_password(password):
                    raise ValidationError(self.error_messages["inactive"], code="inactive")
                raise self.get_invalid_login_error()
        return super().clean()
